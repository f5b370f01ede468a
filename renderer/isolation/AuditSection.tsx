import { useIsolationStore } from "../stores/isolationStore.js";
import { formatCount } from "../util/formatCount.js";
import { AUDIT_INTERVAL_MS, type IsolationController } from "./IsolationController.js";
import { useLoadedModelTargets } from "./IsolationModelPicker.js";
import { useIsolationModelsStore } from "./isolationModelsStore.js";
import { auditCost, auditHeadline, auditScope, formatDuration, unlistedViolations } from "./isolationText.js";
import { ModelRowsList } from "./ModelRowsList.js";

/** The continuous audit of I1–I7: its verdict, the violations it found, what it checked; Run now. */
export function AuditSection({ controller }: { readonly controller: IsolationController }) {
    const audit = useIsolationStore((state) => state.audit);
    const feed = useIsolationStore((state) => state.auditFeed);
    const every = useIsolationModelsStore((state) => (state.target.kind === "all" ? state.audit : undefined));
    const onEvery = useIsolationModelsStore((state) => state.target.kind === "all");
    const models = useLoadedModelTargets();
    const { summary, error } = audit;
    const cost = summary === undefined ? undefined : auditCost(summary);
    const earlier =
        feed?.lastWithViolations !== undefined && feed.lastWithViolations.at !== summary?.at ? feed.lastWithViolations : undefined;
    const state = summary !== undefined ? (summary.ok ? "ok" : "violations") : error !== undefined ? "error" : "pending";
    return (
        <section
            className="isolation-section"
            aria-labelledby="isolation-audit-heading"
            aria-busy={audit.running}
            data-audit-state={state}
            data-num-violations={summary?.numViolations ?? ""}
            data-num-pages-checked={summary?.numPagesChecked ?? ""}
        >
            <div className="isolation-section-header">
                <h3 id="isolation-audit-heading">Audit</h3>
                <button
                    type="button"
                    className="isolation-action"
                    disabled={onEvery && every?.running === true}
                    onClick={() => (onEvery ? controller.auditEvery(models) : void controller.audit())}
                    aria-label="Run audit now"
                >
                    Run audit
                </button>
            </div>
            {onEvery && every !== undefined && (
                <ModelRowsList
                    label="Audit of each loaded model"
                    run={every}
                    verdict={(result) => ({ passed: result.ok, text: auditHeadline(result) })}
                />
            )}
            {summary !== undefined && (
                <>
                    <p className={summary.ok ? "isolation-verdict isolation-ok" : "isolation-verdict isolation-alarm"} role="status">
                        {auditHeadline(summary)}
                    </p>
                    {!summary.ok && (
                        <ul className="violation-list" aria-label="Violations">
                            {summary.violations.map((violation, index) => (
                                <li key={index} data-invariant={violation.invariant}>
                                    <span className="violation-invariant">{violation.invariant}</span> {violation.message}
                                </li>
                            ))}
                            {unlistedViolations(summary) > 0 && <li>… and {formatCount(unlistedViolations(summary))} more</li>}
                        </ul>
                    )}
                    <p className="panel-note isolation-scope">
                        {auditScope(summary)}
                        {audit.checkedAt !== undefined && `, at ${new Date(audit.checkedAt).toLocaleTimeString()}`}.
                    </p>
                    {cost !== undefined && (
                        <p className="panel-note isolation-cost" data-audit-cost="">
                            Cost: {cost}.
                        </p>
                    )}
                </>
            )}
            {earlier !== undefined && (
                <p className="inline-error" role="alert" data-earlier-violations={feed!.numRunsWithViolations}>
                    {formatCount(feed!.numRunsWithViolations)} earlier {feed!.numRunsWithViolations === 1 ? "audit" : "audits"} found
                    violations; the last, {formatDuration(summary === undefined ? 0 : Math.max(0, summary.at - earlier.at))} before this
                    one: {auditHeadline(earlier)}
                    {earlier.violations[0] !== undefined && ` (${earlier.violations[0].invariant}: ${earlier.violations[0].message})`}.
                </p>
            )}
            {error !== undefined && (
                <p className="inline-error" role="alert" data-error-code={error.code}>
                    The audit could not run: {error.message}
                </p>
            )}
            {summary === undefined && error === undefined && <p className="placeholder">{audit.running ? "Auditing…" : "Not run yet."}</p>}
            <p className="panel-note" data-audit-cadence={feed === undefined ? "panel" : "engine"}>
                Every page's state, owner, lease and generation; sealed pages re-checksummed; free pages checked for zeros.{" "}
                {feed === undefined
                    ? `Every ${AUDIT_INTERVAL_MS / 1_000} s while this panel is open.`
                    : `The engine audits every ${formatDuration(feed.intervalMs)}, its byte scans in slices so streams do not stall: ${formatCount(feed.numRuns)} ${feed.numRuns === 1 ? "audit" : "audits"} so far, ${formatCount(feed.numRunsWithViolations)} with violations.`}
            </p>
        </section>
    );
}
