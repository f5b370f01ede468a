import { APP_VIEWS } from "./appViews.js";

/** One line of the shortcuts dialog: the keys as shown, and what they do. */
export interface ShortcutEntry {
    readonly keys: string;
    readonly action: string;
}

/** Every key the page handles itself (useAppShortcuts, ChatView's Esc, the rail's arrows), as the dialog lists them. */
export const APP_SHORTCUTS: readonly ShortcutEntry[] = [
    { keys: "Alt+N", action: "New chat" },
    { keys: "Alt+↑ / Alt+↓", action: "Previous / next chat" },
    { keys: "/", action: "Focus the message box" },
    { keys: "Esc", action: "Stop the answer" },
    ...APP_VIEWS.map((entry) => ({ keys: `Alt+${entry.digit}`, action: `Show ${entry.label}` })),
    { keys: "↑ ↓ ← → Home End", action: "Move between views on the rail" },
    { keys: "?", action: "Show these shortcuts" }
];
