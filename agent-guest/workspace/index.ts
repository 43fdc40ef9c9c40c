export { Workspace, parseRelativePath, DEFAULT_WORKSPACE_LIMITS, GUEST_JOBS_DIR } from "./workspace";
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
export { mountWorkspace, unmountWorkspace, mountAt, IMAGE_NAME, LIMITS_NAME } from "./volume";
export type { WorkspaceVolumeSpec, WorkspaceVolumeOptions, MountedWorkspace } from "./volume";
