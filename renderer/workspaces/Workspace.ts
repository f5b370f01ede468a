import type { StoredWorkspace } from "../../contract/workspaces.js";

export type { StoredMessage, WorkspaceSettings } from "../../contract/workspaces.js";

/**
 * A chat with its own settings and, in the engine, its own isolated KV (the id is the engine's
 * workspace). The host keeps it on disk (contract/workspaces.ts); the renderer mirrors it.
 */
export type Workspace = StoredWorkspace;
