// A new workspace's settings and what the settings accept: one copy, in the contract, shared with the host's store.
export { defaultWorkspaceSettings, workspaceLimits } from "../../contract/workspaces.js";
