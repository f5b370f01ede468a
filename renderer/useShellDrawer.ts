import { useCallback, useEffect, useRef, useState, type KeyboardEvent, type RefObject } from "react";

/**
 * The side panel that becomes a drawer on a narrow window (App.css: the Chats view's workspace
 * list at 720 px, Electron's smallest window, and below). Whether it is open is the shell's own
 * state; on a wide window App.css shows it in place and ignores it.
 */
export type ShellDrawer = "workspaces";

export interface ShellDrawers {
    readonly open: ShellDrawer | undefined;
    toggle(drawer: ShellDrawer): void;
    /** Closes the open drawer; with `restoreFocus`, focus goes back to the button that opened it. */
    close(restoreFocus: boolean): void;
    /** Closes the open drawer and leaves the focus where it is; the same function for the component's life. */
    dismiss(): void;
    /** Esc in a drawer closes it (and goes no further: ChatView's Esc would stop the answer). */
    onDrawerKeyDown(event: KeyboardEvent): void;
    /** The buttons that open each drawer, which get the focus back when it closes. */
    readonly toggles: Readonly<Record<ShellDrawer, RefObject<HTMLButtonElement | null>>>;
    /** Each drawer's Close button, which gets the focus when it opens. */
    readonly closers: Readonly<Record<ShellDrawer, RefObject<HTMLButtonElement | null>>>;
}

/** Focus moves into a drawer as it opens and back to its button as it closes. */
export function useShellDrawer(): ShellDrawers {
    const [open, setOpen] = useState<ShellDrawer>();
    const workspacesToggle = useRef<HTMLButtonElement>(null);
    const workspacesCloser = useRef<HTMLButtonElement>(null);
    const toggles = useRef({ workspaces: workspacesToggle }).current;
    const closers = useRef({ workspaces: workspacesCloser }).current;

    useEffect(() => {
        if (open !== undefined) {
            closers[open].current?.focus();
        }
    }, [open, closers]);

    const close = useCallback(
        (restoreFocus: boolean): void => {
            if (open !== undefined && restoreFocus) {
                toggles[open].current?.focus();
            }
            setOpen(undefined);
        },
        [open, toggles]
    );
    const dismiss = useCallback((): void => setOpen(undefined), []);
    const toggle = useCallback((drawer: ShellDrawer): void => setOpen((current) => (current === drawer ? undefined : drawer)), []);
    const onDrawerKeyDown = useCallback(
        (event: KeyboardEvent): void => {
            // Only while it is a drawer: its button shows (a window widened since leaves the panel in place).
            if (event.key === "Escape" && open !== undefined && (toggles[open].current?.offsetParent ?? null) !== null) {
                event.preventDefault();
                close(true);
            }
        },
        [open, close, toggles]
    );
    return { open, toggle, close, dismiss, onDrawerKeyDown, toggles, closers };
}
