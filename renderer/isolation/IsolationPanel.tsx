import { useEngineStore } from "../stores/engineStore";
import { formatCount } from "../util/formatCount";

/**
 * The engine's isolation counters, as the engine reports them. The continuous audit, differential
 * replay and fault drills (ARCHITECTURE.md) will report here once the engine offers them.
 */
export function IsolationPanel() {
    const snapshot = useEngineStore((state) => state.snapshot);
    if (snapshot === undefined)
        return <p className="placeholder">Waiting for the engine's counters…</p>;
    const { counters } = snapshot;
    const rows: readonly (readonly [key: string, label: string, value: number, alarm?: boolean])[] = [
        ["finished", "Requests finished", counters.requests.finished],
        ["rejected", "Requests rejected at the door", counters.requests.rejected],
        ["cancelled", "Requests cancelled", counters.requests.cancelled],
        ["failed", "Requests failed", counters.requests.failed, counters.requests.failed > 0],
        ["integrityFailures", "Integrity failures caught", counters.integrityFailures, counters.integrityFailures > 0],
        ["staleWritesRefused", "Stale writes refused", counters.staleWritesRefused, counters.staleWritesRefused > 0],
        ["pagesScrubbed", "Pages scrubbed", counters.pagesScrubbed],
        ["swapOuts", "Swaps out to pages", counters.swapOuts],
        ["swapIns", "Swaps back in", counters.swapIns],
        ["swapDrops", "Swapped KV dropped (recomputed on next turn)", counters.swapDrops]
    ];
    return (
        <div className="isolation-panel">
            <table className="counter-table" aria-label="Isolation counters">
                <tbody>
                    {rows.map(([key, label, value, alarm]) => (
                        <tr key={key} data-counter={key} data-value={value} className={alarm === true ? "counter-alarm" : undefined}>
                            <th scope="row">{label}</th>
                            <td>{formatCount(value)}</td>
                        </tr>
                    ))}
                </tbody>
            </table>
            <p className="panel-note">
                Prompt tokens evaluated {formatCount(counters.evaluatedPromptTokens)}, reused {formatCount(counters.reusedPromptTokens)};
                {" "}{formatCount(counters.generatedTokens)} generated.
            </p>
            <p className="panel-note">
                The continuous audit of the pool's invariants, differential replay and fault drills are not in the engine yet; their results will appear here.
            </p>
        </div>
    );
}
