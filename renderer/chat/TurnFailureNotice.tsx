import type { TurnFailure } from "../stores/turnStore.js";

/** Why the last turn has no answer, in place of the answer; nothing of it is stored. */
export function TurnFailureNotice({
    failure,
    onRetry,
    onDismiss
}: {
    readonly failure: TurnFailure;
    readonly onRetry: () => void;
    readonly onDismiss: () => void;
}) {
    return (
        <li className="turn-failure" role="alert" data-error-code={failure.code}>
            <p className="turn-failure-message">{failure.message}</p>
            <p className="turn-failure-code">Error code: {failure.code}</p>
            <div className="message-footer">
                <button type="button" className="link-button" onClick={onRetry} aria-label="Retry the turn">
                    Retry
                </button>
                <button type="button" className="link-button" onClick={onDismiss} aria-label="Dismiss the error">
                    Dismiss
                </button>
            </div>
        </li>
    );
}
