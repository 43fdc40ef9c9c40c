export { Workspace, parseRelativePath, DEFAULT_WORKSPACE_LIMITS } from "./workspace";
export type {
  WorkspaceLimits,
  WorkspaceOptions,
  WorkspaceStage,
  ReadResult,
  WriteResult,
  ListResult,
  ListEntry,
  EntryType,
} from "./workspace";
