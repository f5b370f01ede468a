import { useEffect, useRef } from "react";

/** A modal that asks before a chat is emptied (its branches too). Esc or Cancel keeps it. */
export function ConfirmClearDialog({
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
            aria-labelledby="confirm-clear-title"
            aria-describedby="confirm-clear-text"
            onCancel={(event) => {
                event.preventDefault();
                onClose();
            }}
        >
            <h2 id="confirm-clear-title">Clear the chat of “{name}”?</h2>
            <p id="confirm-clear-text">
                All {numMessages} {numMessages === 1 ? "message" : "messages"} (earlier versions included) are deleted, and the engine drops
                this workspace's KV. The settings stay. This cannot be undone: Export JSON first to keep a copy.
            </p>
            <div className="dialog-actions">
                <button type="button" onClick={onClose} aria-label="Keep the chat" autoFocus>
                    Cancel
                </button>
                <button type="button" className="danger" onClick={onConfirm} aria-label={`Clear the chat of ${name} for good`}>
                    Clear
                </button>
            </div>
        </dialog>
    );
}
