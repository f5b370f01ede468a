import { memo, useState } from "react";
import { AnswerModelLabel } from "./AnswerModelLabel.js";
import { DiskKvNote } from "./DiskKvNote.js";
import type { BranchPosition } from "../../contract/chatBranches.js";
import { useAppServices } from "../AppServices.js";
import { ToolCallCards } from "../mcp/ToolCallCard.js";
import { formatCount } from "../util/formatCount.js";
import type { StoredMessage } from "../workspaces/Workspace.js";
import { tokensPerSecond } from "./chatEdits.js";
import { draftAcceptance } from "./draftAcceptance.js";
import { CopyButton } from "./CopyButton.js";
import { MessageEditor } from "./MessageEditor.js";
import { MessageText } from "./MessageText.js";

const finishNotes: Readonly<Record<NonNullable<StoredMessage["finish"]>, string | undefined>> = {
    stop: undefined,
    length: "Reached Max tokens.",
    stopped: "Stopped by you."
};

/**
 * One stored message, with Copy, Edit (the user's), Delete, the arrows between its versions
 * (‹ 2/3 ›), and Regenerate on the last answer. Memoized: a stored message never changes, so
 * streaming into the live answer below does not parse it again. `idle`: no turn runs, so the
 * chat may change.
 */
export const MessageItem = memo(function MessageItem({
    workspace,
    message,
    branch,
    idle,
    onRegenerate
}: {
    readonly workspace: string;
    readonly message: StoredMessage;
    readonly branch: BranchPosition | undefined;
    readonly idle: boolean;
    readonly onRegenerate?: () => void;
}) {
    const { chat } = useAppServices();
    const [editing, setEditing] = useState(false);
    const note = message.finish === undefined ? undefined : finishNotes[message.finish];
    const who = message.role === "user" ? "your message" : "the answer";
    const rate =
        message.usage !== undefined && message.timing !== undefined
            ? tokensPerSecond(message.usage.completionTokens, message.timing)
            : undefined;
    const drafts = message.usage === undefined ? undefined : draftAcceptance(message.usage);
    return (
        <li className={`message message-${message.role}`} data-role={message.role} data-message-id={message.id}>
            <p className="message-author">
                {message.role === "user" ? "You" : "Model"}
                {message.role === "assistant" && <AnswerModelLabel model={message.model} />}
            </p>
            <ToolCallCards calls={message.toolCalls} />
            {editing ? (
                <MessageEditor
                    text={message.content}
                    onCancel={() => setEditing(false)}
                    onSend={(text) => {
                        if (chat.editAndResend(workspace, message.id, text)) {
                            setEditing(false);
                        }
                    }}
                />
            ) : (
                <MessageText text={message.content} />
            )}
            <div className="message-footer">
                {branch !== undefined && branch.count > 1 && (
                    <span className="branch-arrows" role="group" aria-label={`Version ${branch.index} of ${branch.count} of ${who}`}>
                        <button
                            type="button"
                            className="link-button"
                            disabled={!idle || branch.previous === undefined}
                            onClick={() => branch.previous !== undefined && chat.changeChat(workspace, { select: branch.previous.id })}
                            aria-label={`Show the previous version of ${who}`}
                        >
                            ‹
                        </button>
                        <span className="branch-count">
                            {branch.index}/{branch.count}
                        </span>
                        <button
                            type="button"
                            className="link-button"
                            disabled={!idle || branch.next === undefined}
                            onClick={() => branch.next !== undefined && chat.changeChat(workspace, { select: branch.next.id })}
                            aria-label={`Show the next version of ${who}`}
                        >
                            ›
                        </button>
                    </span>
                )}
                {note !== undefined && <span className="message-note">{note}</span>}
                {message.usage !== undefined && (
                    <span className="message-note">
                        {formatCount(message.usage.completionTokens)} tokens; prompt {formatCount(message.usage.promptTokens)} (
                        {formatCount(message.usage.cachedPromptTokens)} reused)
                    </span>
                )}
                {message.usage !== undefined && <DiskKvNote usage={message.usage} />}
                {drafts !== undefined && (
                    <span className="message-note message-drafts" title="Speculative decoding: drafted tokens the model confirmed">
                        {drafts}
                    </span>
                )}
                {message.timing !== undefined && (
                    <span className="message-note message-timing" title="Time to first token, and tokens per second after it">
                        first token {formatSeconds(message.timing.firstTokenMs)}
                        {rate === undefined ? "" : `; ${rate.toFixed(1)} tokens/s`}
                    </span>
                )}
                <CopyButton text={message.content} label={message.role === "user" ? "Copy your message" : "Copy the answer"} />
                {message.role === "user" && !editing && (
                    <button
                        type="button"
                        className="link-button"
                        disabled={!idle}
                        onClick={() => setEditing(true)}
                        aria-label="Edit your message"
                    >
                        Edit
                    </button>
                )}
                <button
                    type="button"
                    className="link-button"
                    disabled={!idle}
                    onClick={() => chat.changeChat(workspace, { delete: message.id })}
                    aria-label={`Delete ${who}`}
                >
                    Delete
                </button>
                {onRegenerate !== undefined && (
                    <button type="button" className="link-button" onClick={onRegenerate} aria-label="Regenerate the answer">
                        Regenerate
                    </button>
                )}
            </div>
        </li>
    );
});

function formatSeconds(ms: number): string {
    return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
