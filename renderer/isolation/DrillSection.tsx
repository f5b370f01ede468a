import type { DrillReport } from "../../contract/isolation.js";
import { useIsolationStore } from "../stores/isolationStore.js";
import type { IsolationController } from "./IsolationController.js";
import { useLoadedModelTargets } from "./IsolationModelPicker.js";
import { useIsolationModelsStore } from "./isolationModelsStore.js";
import { drillVerdict, failureModesText, formatDuration } from "./isolationText.js";
import { ModelRowsList } from "./ModelRowsList.js";

/** Fault drills: each injects one failure of the incident's class in a sandboxed engine, guard on and guard off. */
export function DrillSection({ controller }: { readonly controller: IsolationController }) {
    const drills = useIsolationStore((state) => state.drills);
    const runs = useIsolationStore((state) => state.drillRuns);
    const everyRuns = useIsolationModelsStore((state) => state.drills);
    const onEvery = useIsolationModelsStore((state) => state.target.kind === "all");
    const models = useLoadedModelTargets();
    const busy = Object.values(runs).some((run) => run.running) || Object.values(everyRuns).some((run) => run.running);
    return (
        <section className="isolation-section" aria-labelledby="isolation-drills-heading">
            <div className="isolation-section-header">
                <h3 id="isolation-drills-heading">Fault drills</h3>
            </div>
            {drills.error !== undefined && (
                <p className="inline-error" data-error-code={drills.error.code}>
                    {drills.error.message}{" "}
                    <button
                        type="button"
                        className="link-button"
                        onClick={() => void controller.loadDrills()}
                        aria-label="Try again: load the drills"
                    >
                        Try again
                    </button>
                </p>
            )}
            {drills.list === undefined ? (
                drills.error === undefined && <p className="placeholder">Loading…</p>
            ) : (
                <ul className="isolation-list" aria-label="Fault drills">
                    {drills.list.map((drill) => {
                        const run = runs[drill.id];
                        const every = onEvery ? everyRuns[drill.id] : undefined;
                        const state = run === undefined ? "idle" : run.running ? "running" : run.result !== undefined ? "done" : "error";
                        return (
                            <li key={drill.id} className="isolation-item" data-drill-id={drill.id} data-drill-state={state}>
                                <div className="isolation-item-row">
                                    <span className="isolation-item-title">{drill.title}</span>
                                    <button
                                        type="button"
                                        className="isolation-action"
                                        disabled={busy}
                                        onClick={() =>
                                            onEvery ? controller.runDrillEvery(drill.id, models) : controller.runDrill(drill.id)
                                        }
                                        aria-label={`Run the ${drill.id} drill`}
                                    >
                                        {run?.running === true || every?.running === true ? "Running…" : "Run"}
                                    </button>
                                </div>
                                <p className="isolation-muted">
                                    Guard: {drill.guard}. {failureModesText(drill.failureModes)}.
                                </p>
                                {run?.running === true && (
                                    <p className="placeholder" role="status">
                                        Running in sandboxed engines, guard on then off; this takes several seconds.
                                    </p>
                                )}
                                {every !== undefined && (
                                    <ModelRowsList
                                        label={`The ${drill.id} drill on each loaded model`}
                                        run={every}
                                        verdict={(result) => {
                                            const verdict = drillVerdict(result);
                                            return { passed: verdict.passed, text: `${verdict.guard}; ${verdict.victim}; ${verdict.leak}` };
                                        }}
                                    />
                                )}
                                {!onEvery && run?.result !== undefined && <DrillReportView report={run.result} />}
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
            <p className="panel-note">Drills run in engines of their own on a tiny model; your workspaces are untouched.</p>
        </section>
    );
}

function DrillReportView({ report }: { readonly report: DrillReport }) {
    const verdict = drillVerdict(report);
    return (
        <div
            className={verdict.passed ? "drill-report drill-passed" : "drill-report drill-failed"}
            role="status"
            data-passed={verdict.passed}
            data-guard-fired={report.guardFired}
            data-guard-code={report.guardError?.code ?? ""}
            data-victim-clean={report.victimClean}
            data-leak-observed={report.leakObservedWithGuardOff}
        >
            <p className="drill-outcome">
                {verdict.passed ? "Passed" : "FAILED"} <span className="isolation-muted">in {formatDuration(report.durationMs)}</span>
            </p>
            <dl className="drill-facts">
                <dt>Guard on</dt>
                <dd className="drill-guard">
                    {verdict.guard}
                    {report.guardError !== null && <span className="drill-detail">{report.guardError.message}</span>}
                </dd>
                <dd className="drill-victim">{verdict.victim}</dd>
                <dt>Guard off</dt>
                <dd className="drill-leak">
                    {verdict.leak}
                    <span className="drill-detail">{report.leakEvidence}</span>
                </dd>
            </dl>
        </div>
    );
}
