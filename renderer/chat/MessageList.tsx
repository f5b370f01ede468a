import { useCallback, useEffect, useMemo, useRef } from "react";
import { branchPositions } from "../../contract/chatBranches.js";
import { useAppServices } from "../AppServices.js";
import { useTurnStore } from "../stores/turnStore.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { LiveToolCalls } from "../mcp/LiveToolCalls.js";
import { LiveAnswer } from "./LiveAnswer.js";
import { MessageItem } from "./MessageItem.js";
import { TurnFailureNotice } from "./TurnFailureNotice.js";

/** Within this many pixels of the bottom, new text keeps the list scrolled to the end. */
const STICK_TO_BOTTOM_PX = 48;

/** The chat: stored messages, then the answer streaming or the error that ended the last turn. */
export function MessageList({ workspace }: { readonly workspace: Workspace }) {
    const { chat } = useAppServices();
    const live = useTurnStore((state) => state.live[workspace.id]);
    const failure = useTurnStore((state) => state.failures[workspace.id]);
    const listRef = useRef<HTMLOListElement>(null);
    const stuckRef = useRef(true);
    const last = workspace.messages.at(-1);
    const idle = live === undefined;

    useEffect(() => {
        const list = listRef.current;
        if (list !== null && stuckRef.current) {
            list.scrollTop = list.scrollHeight;
        }
    }, [workspace.messages.length, live?.text, failure]);

    const regenerate = useCallback((): void => void chat.regenerate(workspace.id), [chat, workspace.id]);
    const positions = useMemo(
        () => branchPositions({ messages: workspace.messages, branches: workspace.branches ?? [] }),
        [workspace.messages, workspace.branches]
    );
    // While a turn regenerates an answer or answers an edit, the chat is shown up to the message it answers.
    const answers = live === undefined ? undefined : chat.answerParent(workspace.id);
    const shown =
        answers === undefined
            ? workspace.messages
            : workspace.messages.slice(0, answers === null ? 0 : workspace.messages.findIndex((message) => message.id === answers) + 1);

    return (
        <ol
            className="message-list"
            ref={listRef}
            aria-label={`Chat in ${workspace.name}`}
            onScroll={(event) => {
                const list = event.currentTarget;
                stuckRef.current = list.scrollHeight - list.scrollTop - list.clientHeight < STICK_TO_BOTTOM_PX;
            }}
        >
            {workspace.messages.length === 0 && live === undefined && (
                <li className="placeholder chat-empty">
                    No messages yet. This workspace's context is its own: nothing from another workspace reaches it.
                </li>
            )}
            {shown.map((message) => (
                <MessageItem
                    key={message.id}
                    workspace={workspace.id}
                    message={message}
                    branch={positions.get(message.id)}
                    idle={idle}
                    onRegenerate={
                        idle && failure === undefined && message === last && message.role === "assistant" ? regenerate : undefined
                    }
                />
            ))}
            {live !== undefined && <LiveToolCalls workspace={workspace.id} />}
            {live !== undefined && <LiveAnswer turn={live} />}
            {idle && failure !== undefined && (
                <TurnFailureNotice
                    failure={failure}
                    onRetry={regenerate}
                    onDismiss={() => useTurnStore.getState().clearFailure(workspace.id)}
                />
            )}
            {idle && failure === undefined && last?.role === "user" && (
                <li className="no-answer">
                    <span>No answer to this message.</span>{" "}
                    <button type="button" className="link-button" onClick={regenerate} aria-label="Ask for an answer again">
                        Ask again
                    </button>
                </li>
            )}
        </ol>
    );
}
