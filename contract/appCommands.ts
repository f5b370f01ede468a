// main → renderer: what the desktop app's menu (and its keyboard shortcuts) asks the window to do
// that only the window can. One event carries them all; main sends it, the preload forwards it,
// the renderer acts on it. Everything the menu can do alone (zoom, dark mode, quit, updates) stays
// in main and never crosses.

/** The one main → renderer event that carries an AppCommand. */
export const APP_COMMAND_EVENT = "kvault:app:command";

/** Workspace shortcuts: Ctrl/Cmd+1 to Ctrl/Cmd+9. */
export const MAX_WORKSPACE_SHORTCUT = 9;

export type AppCommand =
    /** File › New Workspace (Ctrl/Cmd+N): make one and select it. */
    | { readonly command: "newWorkspace" }
    /**
     * Workspace › 1 … 9 (Ctrl/Cmd+1 … 9): the n-th workspace in the list, 1-based; as in browsers,
     * 9 is the last one whatever their number. No workspace at that place: nothing happens.
     */
    | { readonly command: "selectWorkspace"; readonly position: number }
    /** Edit › Find (Ctrl/Cmd+F): find in the selected workspace's chat. */
    | { readonly command: "find" }
    /** File › Open Model… (Ctrl/Cmd+O): the GGUF file chosen in the native dialog, to inspect and offer to load. */
    | { readonly command: "openModelFile"; readonly path: string }
    /** Kvault › Settings… (Ctrl/Cmd+,). */
    | { readonly command: "openSettings" };

/**
 * Checks a value that crossed the process boundary; the renderer calls it on each event before it
 * acts, so a malformed one is dropped (and can be reported) rather than half-applied.
 */
export function parseAppCommand(value: unknown): AppCommand | undefined {
    if (typeof value !== "object" || value === null) {
        return undefined;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort().join(",");
    switch (record.command) {
        case "newWorkspace":
        case "find":
        case "openSettings":
            return keys === "command" ? { command: record.command } : undefined;
        case "selectWorkspace": {
            const { position } = record;
            return keys === "command,position" &&
                typeof position === "number" &&
                Number.isInteger(position) &&
                position >= 1 &&
                position <= MAX_WORKSPACE_SHORTCUT
                ? { command: "selectWorkspace", position }
                : undefined;
        }
        case "openModelFile":
            return keys === "command,path" && typeof record.path === "string" && record.path !== "" && record.path.length <= 4_096
                ? { command: "openModelFile", path: record.path }
                : undefined;
        default:
            return undefined;
    }
}
