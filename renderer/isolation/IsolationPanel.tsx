import type { EngineSnapshot } from "../../contract/EngineSnapshot.js";
import { useAppServices } from "../AppServices.js";
import { useEngineStore } from "../stores/engineStore.js";
import { formatCount } from "../util/formatCount.js";
import { AuditSection } from "./AuditSection.js";
import { CanarySection } from "./CanarySection.js";
import { DrillSection } from "./DrillSection.js";
import { IsolationModelPicker } from "./IsolationModelPicker.js";
import { LeakProbeSection } from "./LeakProbeSection.js";
import { ReplaySection } from "./ReplaySection.js";
import { useIsolationWatch } from "./useIsolationWatch.js";
import "./IsolationPanel.css";

/**
 * Isolation you can check from the app (docs/ARCHITECTURE.md, Isolation you can check): the
 * continuous audit of I1–I7, the canary probe, differential replay of finished turns (I8), fault
 * drills, the leak probe against this Kvault's API or a backend, and the engine's isolation counters.
 */
export function IsolationPanel() {
    const { isolation } = useAppServices();
    useIsolationWatch(isolation);
    return (
        <div className="isolation-panel">
            <IsolationModelPicker />
            <AuditSection controller={isolation} />
            <CanarySection controller={isolation} />
            <ReplaySection controller={isolation} />
            <DrillSection controller={isolation} />
            <LeakProbeSection />
            <CounterSection />
        </div>
    );
}

/** The engine's isolation counters, from its snapshots. */
function CounterSection() {
    const snapshot = useEngineStore((state) => state.snapshot);
    return (
        <section className="isolation-section" aria-labelledby="isolation-counters-heading">
            <div className="isolation-section-header">
                <h3 id="isolation-counters-heading">Counters</h3>
            </div>
            {snapshot === undefined ? (
                <p className="placeholder">Waiting for the engine's counters…</p>
            ) : (
                <Counters counters={snapshot.counters} />
            )}
        </section>
    );
}

function Counters({ counters }: { readonly counters: EngineSnapshot["counters"] }) {
    const rows: readonly (readonly [key: string, label: string, value: number, alarm?: boolean])[] = [
        ["finished", "Requests finished", counters.requests.finished],
        ["rejected", "Requests rejected at the door", counters.requests.rejected],
        ["cancelled", "Requests cancelled", counters.requests.cancelled],
        ["failed", "Requests failed", counters.requests.failed, counters.requests.failed > 0],
        ["integrityFailures", "Integrity failures caught", counters.integrityFailures, counters.integrityFailures > 0],
        ["staleWritesRefused", "Stale writes refused", counters.staleWritesRefused, counters.staleWritesRefused > 0],
        ["staleCompletionsIgnored", "Stale completions ignored", counters.staleCompletionsIgnored, counters.staleCompletionsIgnored > 0],
        ["pagesScrubbed", "Pages scrubbed", counters.pagesScrubbed],
        ["swapOuts", "Swaps out to pages", counters.swapOuts],
        ["swapIns", "Swaps back in", counters.swapIns],
        ["swapDrops", "Swapped KV dropped (recomputed on next turn)", counters.swapDrops]
    ];
    return (
        <>
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
                Prompt tokens evaluated {formatCount(counters.evaluatedPromptTokens)}, reused {formatCount(counters.reusedPromptTokens)};{" "}
                {formatCount(counters.generatedTokens)} generated
                {counters.acceptedDraftTokens + counters.rejectedDraftTokens > 0 &&
                    `; speculative decoding drafted ${formatCount(counters.acceptedDraftTokens + counters.rejectedDraftTokens)}, ` +
                        `${formatCount(counters.acceptedDraftTokens)} accepted`}
                .
            </p>
        </>
    );
}
