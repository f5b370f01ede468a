import { useEffect, useRef } from "react";
import { APP_SHORTCUTS } from "./appShortcuts.js";
import { useViewStore } from "./viewStore.js";

/** The list of the page's keyboard shortcuts, a modal opened by "?" or the header's keyboard button; Esc or Close shuts it. */
export function ShortcutsDialog() {
    const open = useViewStore((state) => state.shortcutsOpen);
    const dialogRef = useRef<HTMLDialogElement>(null);
    useEffect(() => {
        const dialog = dialogRef.current;
        if (dialog === null) {
            return;
        }
        if (open && !dialog.open) {
            dialog.showModal();
        } else if (!open && dialog.open) {
            dialog.close();
        }
    }, [open]);
    return (
        <dialog
            ref={dialogRef}
            className="confirm-dialog shortcuts-dialog"
            aria-labelledby="shortcuts-title"
            onClose={() => useViewStore.getState().setShortcutsOpen(false)}
        >
            <h2 id="shortcuts-title">Keyboard shortcuts</h2>
            <table className="shortcuts-table">
                <tbody>
                    {APP_SHORTCUTS.map((shortcut) => (
                        <tr key={shortcut.keys}>
                            <th scope="row">
                                <kbd>{shortcut.keys}</kbd>
                            </th>
                            <td>{shortcut.action}</td>
                        </tr>
                    ))}
                </tbody>
            </table>
            <div className="dialog-actions">
                <button type="button" aria-label="Close the shortcuts" onClick={() => useViewStore.getState().setShortcutsOpen(false)}>
                    Close
                </button>
            </div>
        </dialog>
    );
}
