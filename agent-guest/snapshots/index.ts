export { holdLabels } from "./labels";
export { DEFAULT_RETENTION, ensureStore, listSnapshots, manifestDigest, pruneSnapshots, readManifest, restoreSnapshot, storeReflinks, takeSnapshot } from "./store";
export type { CopyMethod, RestoreResult, Retention, SnapshotManifest } from "./store";
export { openDirNoFollow, treeDigest, walkTree } from "./tree";
export type { TreeBudget, TreeEntry, TreeEntryType, TreeSummary } from "./tree";
