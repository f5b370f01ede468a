import type { WorkspaceSettings } from "./Workspace";

/** A new workspace's settings. */
export const defaultWorkspaceSettings: WorkspaceSettings = Object.freeze({
    systemPrompt: "",
    temperature: 0.7,
    maxTokens: 256
});

/** What the settings accept; the engine checks the same ranges (engine/service/validateChatTurn.ts). */
export const workspaceLimits = Object.freeze({
    minTemperature: 0,
    maxTemperature: 2,
    minMaxTokens: 1,
    maxMaxTokens: 1_048_576,
    maxNameChars: 80
});
