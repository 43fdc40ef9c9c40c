export { holdLabels } from "./labels";
export { storedBlobs } from "./blobs";
export { DEFAULT_RETENTION, digestAfterJob, ensureStore, listSnapshots, manifestDigest, manifestEntries, migrateStore, newestSnapshotOf, pruneSnapshots, readManifest, storeReflinks, sweepPartialSnapshots, takeSnapshot } from "./store";
export type { CopyMethod, Migration, PruneSeam, Retention, SnapshotManifest } from "./store";
export { restoreSnapshot } from "./restore";
export type { RestoreHooks, RestoreResult } from "./restore";
export { knownFrom, openDirNoFollow, stampOf, treeDigest, walkTree } from "./tree";
export type { TreeBudget, TreeEntry, TreeEntryType, TreeSummary } from "./tree";
