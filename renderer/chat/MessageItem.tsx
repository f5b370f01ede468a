import { memo } from "react";
import { formatCount } from "../util/formatCount.js";
import type { StoredMessage } from "../workspaces/Workspace.js";
import { CopyButton } from "./CopyButton.js";
import { MessageText } from "./MessageText.js";

const finishNotes: Readonly<Record<NonNullable<StoredMessage["finish"]>, string | undefined>> = {
    stop: undefined,
    length: "Reached Max tokens.",
    stopped: "Stopped by you."
};

/**
 * One stored message, with Copy, and Regenerate on the last answer. Memoized: a stored message
 * never changes, so streaming into the live answer below does not parse it again.
 */
export const MessageItem = memo(function MessageItem({
    message,
    onRegenerate
}: {
    readonly message: StoredMessage;
    readonly onRegenerate?: () => void;
}) {
    const note = message.finish === undefined ? undefined : finishNotes[message.finish];
    return (
        <li className={`message message-${message.role}`} data-role={message.role} data-message-id={message.id}>
            <p className="message-author">{message.role === "user" ? "You" : "Model"}</p>
            <MessageText text={message.content} />
            <div className="message-footer">
                {note !== undefined && <span className="message-note">{note}</span>}
                {message.usage !== undefined && (
                    <span className="message-note">
                        {formatCount(message.usage.completionTokens)} tokens; prompt {formatCount(message.usage.promptTokens)} (
                        {formatCount(message.usage.cachedPromptTokens)} reused)
                    </span>
                )}
                <CopyButton text={message.content} label={message.role === "user" ? "Copy your message" : "Copy the answer"} />
                {onRegenerate !== undefined && (
                    <button type="button" className="link-button" onClick={onRegenerate} aria-label="Regenerate the answer">
                        Regenerate
                    </button>
                )}
            </div>
        </li>
    );
});
