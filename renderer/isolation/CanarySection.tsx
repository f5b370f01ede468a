import type { CanaryProbeResult, CanaryReport } from "../../contract/isolation.js";
import { useIsolationStore } from "../stores/isolationStore.js";
import type { IsolationController } from "./IsolationController.js";
import { useLoadedModelTargets } from "./IsolationModelPicker.js";
import { useIsolationModelsStore } from "./isolationModelsStore.js";
import { canaryHeadline, canaryScope, formatDuration, probeNumbers } from "./isolationText.js";
import { ModelRowsList } from "./ModelRowsList.js";

/**
 * The canary probe (how the 2026 leak was found): unique markers at the start and end of a long
 * prompt in a temporary workspace A, probes from a temporary workspace B, on the loaded model.
 */
export function CanarySection({ controller }: { readonly controller: IsolationController }) {
    const canary = useIsolationStore((state) => state.canary);
    const every = useIsolationModelsStore((state) => state.canary);
    const onEvery = useIsolationModelsStore((state) => state.target.kind === "all");
    const models = useLoadedModelTargets();
    const busy = canary.running || every?.running === true;
    const state = canary.running
        ? "running"
        : canary.result !== undefined
          ? canary.result.passed
              ? "passed"
              : "failed"
          : canary.error !== undefined
            ? "error"
            : "idle";
    return (
        <section
            className="isolation-section"
            aria-labelledby="isolation-canary-heading"
            aria-busy={canary.running}
            data-canary-state={state}
        >
            <div className="isolation-section-header">
                <h3 id="isolation-canary-heading">Canary probe</h3>
                <button
                    type="button"
                    className="isolation-action"
                    disabled={busy}
                    onClick={() => (onEvery ? controller.runCanaryEvery(models) : controller.runCanary())}
                    aria-label="Run the canary probe"
                >
                    {busy ? "Running…" : "Run"}
                </button>
            </div>
            {onEvery && every !== undefined && (
                <ModelRowsList
                    label="Canary probe of each loaded model"
                    run={every}
                    verdict={(result) => ({ passed: result.passed, text: canaryHeadline(result) })}
                />
            )}
            {canary.running && (
                <p className="placeholder" role="status">
                    Sending workspace A a long prompt with a secret marker at each end, then probing from workspace B; this takes seconds to
                    minutes, depending on the model.
                </p>
            )}
            {canary.result !== undefined && <CanaryReportView report={canary.result} />}
            {canary.error !== undefined && (
                <p className="inline-error" role="alert" data-error-code={canary.error.code}>
                    The canary probe could not run: {canary.error.message}
                </p>
            )}
            <p className="panel-note">
                Runs on the loaded model, in two temporary workspaces it forgets afterwards; your workspaces keep running. On a real model
                the text probes ask B to recall A&apos;s markers; on any model the KV probes search every page B received, and B&apos;s
                decode sequence, for A&apos;s KV rows.
            </p>
        </section>
    );
}

function CanaryReportView({ report }: { readonly report: CanaryReport }) {
    return (
        <div className={report.passed ? "drill-report drill-passed" : "drill-report drill-failed"} data-passed={report.passed}>
            <p className="drill-outcome" role="status">
                {canaryHeadline(report)} <span className="isolation-muted">in {formatDuration(report.durationMs)}</span>
            </p>
            <p className="isolation-muted canary-markers">
                Markers {report.markers.join(" and ")}. {canaryScope(report)}.
            </p>
            <ul className="isolation-list canary-probes" aria-label="Canary probes">
                {report.probes.map((probe) => (
                    <ProbeView key={probe.id} probe={probe} />
                ))}
            </ul>
            <p className="isolation-muted">
                Free pages: {report.numFreePagesBefore.toLocaleString("en-US")} before, {report.numFreePagesAfter.toLocaleString("en-US")}{" "}
                after its workspaces were forgotten.
            </p>
        </div>
    );
}

const outcomeLabels: Readonly<Record<CanaryProbeResult["outcome"], string>> = { passed: "Passed", failed: "FAILED", skipped: "Skipped" };

function ProbeView({ probe }: { readonly probe: CanaryProbeResult }) {
    const numbers = probeNumbers(probe);
    return (
        <li className="isolation-item canary-probe" data-probe-id={probe.id} data-outcome={probe.outcome}>
            <span
                className={
                    probe.outcome === "failed"
                        ? "violation-invariant isolation-alarm"
                        : probe.outcome === "passed"
                          ? "violation-invariant isolation-ok"
                          : "violation-invariant"
                }
            >
                {outcomeLabels[probe.outcome]}
            </span>{" "}
            {probe.title}
            <span className="drill-detail">{probe.evidence}</span>
            {numbers !== "" && <span className="drill-detail canary-numbers">{numbers}</span>}
        </li>
    );
}
