import { useEffect, useRef, type ReactNode } from "react";

/**
 * A modal that asks before something is deleted for good: a chat cleared, a workspace deleted.
 * It opens on mount, Cancel has the focus, and Esc or Cancel keeps what would be lost.
 */
export function ConfirmDialog({
    id,
    title,
    children,
    keepLabel,
    confirmText,
    confirmLabel,
    onConfirm,
    onClose
}: {
    /** Prefix of the title's and text's element ids, unique on the page (`confirm-clear`). */
    readonly id: string;
    readonly title: ReactNode;
    /** What is lost, with the numbers; the dialog's description. */
    readonly children: ReactNode;
    /** Cancel's accessible name: what it keeps ("Keep the chat"). */
    readonly keepLabel: string;
    /** The confirming button's text ("Clear") and accessible name ("Clear the chat of Notes for good"). */
    readonly confirmText: string;
    readonly confirmLabel: string;
    readonly onConfirm: () => void;
    readonly onClose: () => void;
}) {
    const dialogRef = useRef<HTMLDialogElement>(null);
    useEffect(() => {
        const dialog = dialogRef.current;
        if (dialog !== null && !dialog.open) {
            dialog.showModal();
        }
        return () => dialog?.close();
    }, []);
    return (
        <dialog
            ref={dialogRef}
            className="confirm-dialog"
            aria-labelledby={`${id}-title`}
            aria-describedby={`${id}-text`}
            onCancel={(event) => {
                event.preventDefault();
                onClose();
            }}
        >
            <h2 id={`${id}-title`}>{title}</h2>
            <p id={`${id}-text`}>{children}</p>
            <div className="dialog-actions">
                <button type="button" onClick={onClose} aria-label={keepLabel} autoFocus>
                    Cancel
                </button>
                <button type="button" className="danger" onClick={onConfirm} aria-label={confirmLabel}>
                    {confirmText}
                </button>
            </div>
        </dialog>
    );
}
