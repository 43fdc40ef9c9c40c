export { holdLabels } from "./labels";
export { DEFAULT_RETENTION, ensureStore, listSnapshots, manifestDigest, manifestEntries, pruneSnapshots, readManifest, restoreSnapshot, storeReflinks, sweepPartialSnapshots, takeSnapshot } from "./store";
export type { CopyMethod, RestoreResult, Retention, SnapshotManifest } from "./store";
export { knownFrom, openDirNoFollow, stampOf, treeDigest, walkTree } from "./tree";
export type { TreeBudget, TreeEntry, TreeEntryType, TreeSummary } from "./tree";
