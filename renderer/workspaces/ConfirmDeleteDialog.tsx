import { useEffect, useRef } from "react";

/** A modal that asks before a workspace and its chat are deleted. Esc or Cancel keeps it. */
export function ConfirmDeleteDialog({
    name,
    numMessages,
    onConfirm,
    onClose
}: {
    readonly name: string;
    readonly numMessages: number;
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
            aria-labelledby="confirm-delete-title"
            aria-describedby="confirm-delete-text"
            onCancel={(event) => {
                event.preventDefault();
                onClose();
            }}
        >
            <h2 id="confirm-delete-title">Delete “{name}”?</h2>
            <p id="confirm-delete-text">
                Its chat ({numMessages} {numMessages === 1 ? "message" : "messages"}) and settings are deleted, and the engine drops its KV
                and pages. This cannot be undone.
            </p>
            <div className="dialog-actions">
                <button type="button" onClick={onClose} aria-label="Keep the workspace" autoFocus>
                    Cancel
                </button>
                <button type="button" className="danger" onClick={onConfirm} aria-label={`Delete ${name} for good`}>
                    Delete
                </button>
            </div>
        </dialog>
    );
}
