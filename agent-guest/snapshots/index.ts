export { holdLabels } from "./labels";
export { DEFAULT_RETENTION, ensureStore, listSnapshots, manifestDigest, manifestEntries, newestSnapshotOf, pruneSnapshots, readManifest, storeReflinks, sweepPartialSnapshots, takeSnapshot } from "./store";
export type { CopyMethod, Retention, SnapshotManifest } from "./store";
export { restoreSnapshot } from "./restore";
export type { RestoreHooks, RestoreResult } from "./restore";
export { knownFrom, openDirNoFollow, stampOf, treeDigest, walkTree } from "./tree";
export type { TreeBudget, TreeEntry, TreeEntryType, TreeSummary } from "./tree";
