import type { LiveTurn } from "../stores/turnStore.js";
import { MessageText } from "./MessageText.js";

const phaseLabels = {
    sending: () => "Sending…",
    queued: (turn: LiveTurn) =>
        `Queued${turn.queuePosition === undefined ? "" : `, position ${turn.queuePosition}`}; waiting for a free sequence…`,
    running: () => "Answering…",
    stopping: () => "Stopping…"
} as const;

/** The answer as it streams. Not part of the chat until the turn finishes. */
export function LiveAnswer({ turn }: { readonly turn: LiveTurn }) {
    return (
        <li
            className="message message-assistant message-live"
            data-live-turn={turn.requestId}
            data-phase={turn.phase}
            data-streamed-chars={turn.text.length}
            aria-busy="true"
        >
            <p className="message-author">
                Model <span className="message-phase">{phaseLabels[turn.phase](turn)}</span>
            </p>
            {turn.text !== "" && <MessageText text={turn.text} />}
        </li>
    );
}
