import type { ModelRows } from "./isolationModelsStore.js";

/** What a row says of one model's answer, and whether it passed. */
export interface ModelRowVerdict {
    readonly passed: boolean;
    readonly text: string;
}

/** A run over every loaded model: a row per model naming it, with its verdict, its failure, or that it runs or waits. */
export function ModelRowsList<T>({
    label,
    run,
    verdict
}: {
    readonly label: string;
    readonly run: ModelRows<T>;
    readonly verdict: (result: T) => ModelRowVerdict;
}) {
    return (
        <ul className="isolation-model-rows" aria-label={label} aria-busy={run.running}>
            {run.rows.map((row) => {
                const shown = row.result === undefined ? undefined : verdict(row.result);
                const state = row.running
                    ? "running"
                    : shown !== undefined
                      ? shown.passed
                          ? "passed"
                          : "failed"
                      : row.error !== undefined
                        ? "error"
                        : "waiting";
                return (
                    <li key={row.model} className="isolation-model-row" data-model={row.model} data-row-state={state}>
                        <span className="isolation-item-title">{row.model}</span>{" "}
                        {row.running && <span className="placeholder">Running…</span>}
                        {state === "waiting" && <span className="isolation-muted">Waiting for the model before it.</span>}
                        {shown !== undefined && (
                            <span className={shown.passed ? "isolation-ok" : "isolation-alarm"}>
                                {shown.passed ? "" : "FAILED: "}
                                {shown.text}
                            </span>
                        )}
                        {row.error !== undefined && (
                            <span className="inline-error" data-error-code={row.error.code}>
                                {row.error.message}
                            </span>
                        )}
                    </li>
                );
            })}
        </ul>
    );
}
