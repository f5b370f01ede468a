import type { WorkspaceSettings } from "../workspaces/Workspace.js";

/**
 * A preset's settings as a patch of a workspace's: every optional knob the preset leaves out is
 * cleared (the engine's default), so applying it gives exactly the preset, not a mix.
 */
export function presetPatch(settings: WorkspaceSettings): Partial<WorkspaceSettings> {
    return { topP: undefined, topK: undefined, minP: undefined, repeatPenalty: undefined, seed: undefined, stop: undefined, ...settings };
}

/** "Coder" → "Coder (copy)", within `maxChars`. */
export function copyName(name: string, maxChars: number): string {
    return `${name.slice(0, maxChars - " (copy)".length)} (copy)`;
}
