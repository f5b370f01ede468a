import { useEffect, useState } from "react";
import type { BackendView, LeakProbePlanView, LeakProbeVerdicts } from "../../contract/backends.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { formatCount } from "../util/formatCount.js";
import { onBackendsChanged } from "../settings/backendsChanged.js";

type ProbeStep =
    | { readonly kind: "idle" }
    | { readonly kind: "planning" }
    | { readonly kind: "planned"; readonly plan: LeakProbePlanView }
    | { readonly kind: "running"; readonly plan: LeakProbePlanView }
    | { readonly kind: "done"; readonly verdicts: LeakProbeVerdicts }
    | { readonly kind: "failed"; readonly message: string };

/**
 * The leak probe (probe/, `npm run probe`) from the panel: against this Kvault's own API or a
 * backend's model, from outside, as a client of its API. Plan first (the window it found, the
 * requests and tokens it will send), then Run, then the verdict of each probe.
 */
export function LeakProbeSection() {
    const { rpc } = useAppServices();
    const [backends, setBackends] = useState<readonly BackendView[]>([]);
    const [target, setTarget] = useState("kvault");
    const [step, setStep] = useState<ProbeStep>({ kind: "idle" });
    useEffect(() => {
        let live = true;
        const ask = (): void => {
            rpc.call("listBackends", {}).then(
                (result) => live && setBackends(result.backends),
                () => undefined // the select then offers this Kvault only; the backends' own trouble shows in a workspace's settings
            );
        };
        ask();
        const unsubscribe = onBackendsChanged(ask); // the settings screen added, changed or removed one
        return () => {
            live = false;
            unsubscribe();
        };
    }, [rpc]);
    const failed = (error: unknown): void => setStep({ kind: "failed", message: toRpcError(error).message });
    const plan = (): void => {
        setStep({ kind: "planning" });
        rpc.call("planLeakProbe", { target }).then((planned) => setStep({ kind: "planned", plan: planned }), failed);
    };
    const run = (planned: LeakProbePlanView): void => {
        setStep({ kind: "running", plan: planned });
        rpc.call("runLeakProbe", { target: planned.target }).then((verdicts) => setStep({ kind: "done", verdicts }), failed);
    };
    const busy = step.kind === "planning" || step.kind === "running";

    return (
        <section className="isolation-section" aria-labelledby="isolation-leak-probe-heading" aria-busy={busy} data-probe-state={step.kind}>
            <div className="isolation-section-header">
                <h3 id="isolation-leak-probe-heading">Leak probe</h3>
                <select
                    aria-label="Probe target"
                    value={target}
                    disabled={busy}
                    onChange={(event) => {
                        setTarget(event.target.value);
                        setStep({ kind: "idle" });
                    }}
                >
                    <option value="kvault">This Kvault's API</option>
                    {backends.flatMap((backend) =>
                        backend.models.map((model) => (
                            <option key={`${backend.name}/${model.id}`} value={`${backend.name}/${model.id}`}>
                                {`${backend.name}: ${model.id}`}
                            </option>
                        ))
                    )}
                </select>
                <button type="button" className="isolation-action" disabled={busy} onClick={plan} aria-label="Plan the leak probe">
                    {step.kind === "planning" ? "Planning…" : "Plan"}
                </button>
            </div>
            <p className="panel-note">
                Sends marked documents from one identity and asks for them from another, over the target's own API, across its window.
            </p>
            {(step.kind === "planned" || step.kind === "running") && (
                <div data-probe-plan>
                    <p>
                        {step.plan.url} ({step.plan.model}): window {formatCount(step.plan.window)} from {step.plan.windowSource}. The run
                        sends <strong data-probe-requests>{formatCount(step.plan.numRequests)}</strong> requests, about{" "}
                        {formatCount(step.plan.promptTokens)} prompt tokens and at most {formatCount(step.plan.completionTokens)} completion
                        tokens{step.plan.remote ? ", to a server beyond this machine that may bill for them" : ""}.
                    </p>
                    <button
                        type="button"
                        className="isolation-action"
                        disabled={step.kind === "running"}
                        onClick={() => run(step.plan)}
                        aria-label="Run the leak probe"
                    >
                        {step.kind === "running" ? "Running…" : step.plan.remote ? "Run (it may bill)" : "Run"}
                    </button>
                </div>
            )}
            {step.kind === "done" && (
                <div data-probe-verdict={step.verdicts.verdict}>
                    <p>
                        <strong>{verdictWord(step.verdicts.verdict)}</strong>: {formatCount(step.verdicts.numExchanges)} requests to{" "}
                        {step.verdicts.url} ({step.verdicts.model}) in {Math.round(step.verdicts.elapsedMs / 1000)} s;{" "}
                        {step.verdicts.identities}.
                    </p>
                    <ul>
                        {step.verdicts.probes.map((probe) => (
                            <li key={probe.id} data-probe={probe.id} data-verdict={probe.verdict}>
                                {probe.title}: {verdictWord(probe.verdict)}. {probe.reason}
                            </li>
                        ))}
                    </ul>
                </div>
            )}
            {step.kind === "failed" && (
                <p className="placeholder" role="alert">
                    The leak probe could not run: {step.message}
                </p>
            )}
        </section>
    );
}

function verdictWord(verdict: LeakProbeVerdicts["verdict"]): string {
    return verdict === "pass" ? "Passed" : verdict === "finding" ? "Finding" : "Inconclusive";
}
