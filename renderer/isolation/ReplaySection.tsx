import { ownerLabel } from "../pageMap/ownerLabel.js";
import { useIsolationStore } from "../stores/isolationStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { formatTokens } from "../util/formatCount.js";
import type { IsolationController } from "./IsolationController.js";
import { formatDuration, replayVerdict, shortRequestId } from "./isolationText.js";

/** Turns listed at most, newest first. */
const MAX_TURNS_SHOWN = 8;

/** Differential replay (I8): a finished greedy turn recomputed alone in a fresh context, token by token. */
export function ReplaySection({ controller }: { readonly controller: IsolationController }) {
    const replayable = useIsolationStore((state) => state.replayable);
    const replays = useIsolationStore((state) => state.replays);
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const turns = [...(replayable.turns ?? [])].reverse().slice(0, MAX_TURNS_SHOWN);
    return (
        <section className="isolation-section" aria-labelledby="isolation-replay-heading">
            <div className="isolation-section-header">
                <h3 id="isolation-replay-heading">Differential replay</h3>
                <button
                    type="button"
                    className="link-button"
                    onClick={() => void controller.refreshReplayable()}
                    aria-label="Refresh the replayable turns"
                >
                    Refresh
                </button>
            </div>
            {replayable.error !== undefined && (
                <p className="inline-error" data-error-code={replayable.error.code}>
                    {replayable.error.message}
                </p>
            )}
            {turns.length === 0 ? (
                <p className="placeholder">
                    {replayable.turns === undefined ? "Loading…" : "No turn to replay yet: finish a turn at temperature 0."}
                </p>
            ) : (
                <ul className="isolation-list" aria-label="Replayable turns">
                    {turns.map((turn) => {
                        const workspace = ownerLabel(turn.workspace, workspaces).name;
                        const run = replays[turn.requestId];
                        const state =
                            run === undefined
                                ? "idle"
                                : run.running
                                  ? "running"
                                  : run.result !== undefined
                                    ? run.result.identical
                                        ? "identical"
                                        : "diverged"
                                    : "error";
                        return (
                            <li key={turn.requestId} className="isolation-item" data-request-id={turn.requestId} data-replay-state={state}>
                                <div className="isolation-item-row">
                                    <span className="isolation-item-title" title={turn.requestId}>
                                        {workspace}{" "}
                                        <span className="isolation-muted">
                                            · {shortRequestId(turn.requestId)} · {formatTokens(turn.numTokens)}
                                        </span>
                                    </span>
                                    <button
                                        type="button"
                                        className="isolation-action"
                                        disabled={run?.running === true}
                                        onClick={() => void controller.replay(turn.requestId)}
                                        aria-label={`Replay ${shortRequestId(turn.requestId)} of ${workspace}`}
                                    >
                                        {run?.running === true ? "Replaying…" : "Replay"}
                                    </button>
                                </div>
                                {run?.result !== undefined && (
                                    <p
                                        className={
                                            run.result.identical ? "isolation-verdict isolation-ok" : "isolation-verdict isolation-alarm"
                                        }
                                        role="status"
                                    >
                                        {replayVerdict(run.result)}{" "}
                                        <span className="isolation-muted">({formatDuration(run.result.durationMs)})</span>
                                    </p>
                                )}
                                {run?.error !== undefined && (
                                    <p className="inline-error" role="alert" data-error-code={run.error.code}>
                                        {run.error.message}
                                    </p>
                                )}
                            </li>
                        );
                    })}
                </ul>
            )}
            <p className="panel-note">
                Recomputes the answer alone in a fresh context, greedy, and compares it token by token with what was served (I8).
            </p>
        </section>
    );
}
