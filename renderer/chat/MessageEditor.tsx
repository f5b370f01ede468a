import { useState } from "react";
import { workspaceLimits } from "../workspaces/workspaceDefaults.js";

/**
 * Edit a sent message: Send makes the new text a new version of it and asks again (the old
 * version and its answers stay, one ‹ away); Cancel or Esc keeps it. Ctrl/⌘+Enter sends.
 */
export function MessageEditor({
    text,
    onSend,
    onCancel
}: {
    readonly text: string;
    readonly onSend: (text: string) => void;
    readonly onCancel: () => void;
}) {
    const [draft, setDraft] = useState(text);
    const unchanged = draft === text || draft.trim() === "";
    return (
        <form
            className="message-editor"
            onSubmit={(event) => {
                event.preventDefault();
                if (!unchanged) {
                    onSend(draft);
                }
            }}
        >
            <textarea
                aria-label="Edit your message"
                value={draft}
                rows={Math.min(12, Math.max(2, draft.split("\n").length))}
                maxLength={workspaceLimits.maxMessageChars}
                autoFocus
                onChange={(event) => setDraft(event.target.value)}
                onKeyDown={(event) => {
                    if (event.key === "Escape") {
                        event.preventDefault();
                        onCancel();
                    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
                        event.preventDefault();
                        event.currentTarget.form?.requestSubmit();
                    }
                }}
            />
            <div className="dialog-actions">
                <button type="button" onClick={onCancel} aria-label="Cancel the edit">
                    Cancel
                </button>
                <button type="submit" className="primary" disabled={unchanged} aria-label="Send the edited message">
                    Send
                </button>
            </div>
        </form>
    );
}
