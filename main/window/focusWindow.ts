// Pure on purpose: what a second launch of Kvault does to the window that is already open.

/** The part of a BrowserWindow a second launch touches. */
export interface FocusableWindow {
    isDestroyed(): boolean;
    isMinimized(): boolean;
    isVisible(): boolean;
    restore(): void;
    show(): void;
    focus(): void;
}

/**
 * Brings the running window to the front: restored if minimized, shown if hidden (closed to the
 * dock on macOS, or not shown yet), focused. False when there is no window to bring, so the caller
 * opens one instead.
 */
export function focusWindow(window: FocusableWindow | undefined): boolean {
    if (window === undefined || window.isDestroyed()) {
        return false;
    }
    if (window.isMinimized()) {
        window.restore();
    }
    if (!window.isVisible()) {
        window.show();
    }
    window.focus();
    return true;
}
