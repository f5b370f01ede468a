import { useEffect, useRef, type FormEvent, type KeyboardEvent } from "react";
import { composeMessage } from "../../contract/attachments.js";
import { AttachmentBar, useAttachmentDrop } from "../attachments/AttachmentBar.js";
import { attachedBlocks, useAttachmentStore } from "../attachments/attachmentStore.js";
import { useAppServices } from "../AppServices.js";
import { withRetrievedChunks } from "../retrieval/withRetrievedChunks.js";
import { useDraftStore } from "../stores/draftStore.js";
import { useTurnStore } from "../stores/turnStore.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { useComposerState } from "./useComposerState.js";

/** The message box: Enter sends, Shift+Enter is a new line, Esc stops (ChatView). */
export function Composer({ workspace }: { readonly workspace: Workspace }) {
    const { chat, rpc } = useAppServices();
    const draft = useDraftStore((state) => state.drafts[workspace.id] ?? "");
    const live = useTurnStore((state) => state.live[workspace.id]);
    const { canSend, reason } = useComposerState(workspace);
    const inputRef = useRef<HTMLTextAreaElement>(null);
    const drop = useAttachmentDrop(workspace);

    useEffect(() => inputRef.current?.focus(), [workspace.id]);

    const send = (): void => {
        // The attached files go in the message as their blocks, before what was typed (contract/attachments.ts).
        if (!canSend) {
            return;
        }
        const blocks = attachedBlocks(workspace.id);
        if (useAttachmentStore.getState().numIndexed[workspace.id] === undefined) {
            if (chat.send(workspace.id, composeMessage(blocks, draft))) {
                useAttachmentStore.getState().clear(workspace.id);
            }
            return;
        }
        // Retrieval is on: the nearest chunks of this workspace's own index go in front of the question.
        void withRetrievedChunks(rpc, workspace, blocks, draft).then((message) => {
            if (chat.send(workspace.id, message)) {
                useAttachmentStore.getState().clear(workspace.id);
            }
        });
    };
    const onSubmit = (event: FormEvent): void => {
        event.preventDefault();
        send();
    };
    const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>): void => {
        if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            send();
        }
    };

    return (
        <form className="composer" onSubmit={onSubmit} aria-label={`Message to ${workspace.name}`} {...drop}>
            <AttachmentBar workspace={workspace} />
            <textarea
                ref={inputRef}
                className="composer-input"
                aria-label="Message"
                rows={3}
                placeholder={`Message ${workspace.name} (Enter sends, Shift+Enter for a new line)`}
                value={draft}
                onChange={(event) => useDraftStore.getState().setDraft(workspace.id, event.target.value)}
                onKeyDown={onKeyDown}
                aria-describedby={reason === undefined ? undefined : `composer-reason-${workspace.id}`}
            />
            <div className="composer-actions">
                {live === undefined ? (
                    <button type="submit" className="primary" disabled={!canSend} aria-label="Send message">
                        Send
                    </button>
                ) : (
                    <button
                        type="button"
                        className="danger"
                        onClick={() => chat.stop(workspace.id)}
                        disabled={live.phase === "stopping"}
                        aria-label="Stop the answer"
                    >
                        {live.phase === "stopping" ? "Stopping…" : "Stop"}
                    </button>
                )}
            </div>
            {reason !== undefined && (
                <p id={`composer-reason-${workspace.id}`} className="composer-reason" role="status">
                    {reason}
                </p>
            )}
        </form>
    );
}
