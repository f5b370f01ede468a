import { useEngineStore } from "../stores/engineStore";
import { formatCount } from "../util/formatCount";

/** The loaded model and the geometry the engine measured for it. */
export function ModelPanel() {
    const info = useEngineStore((state) => state.info);
    const infoError = useEngineStore((state) => state.infoError);
    if (info === undefined)
        return <p className="placeholder">{infoError ?? "Waiting for the engine…"}</p>;
    const { mode, window: contextWindow, capacities } = info;
    return (
        <div className="model-panel">
            <dl className="facts" aria-label="Loaded model">
                <dt>Model</dt>
                <dd data-fact="model-name">{info.modelName}</dd>
                <dt>File</dt>
                <dd className="fact-path" title={info.modelPath}>{info.modelPath}</dd>
                <dt>Backend</dt>
                <dd data-fact="backend">{info.backend}</dd>
                <dt>Mode</dt>
                <dd data-fact="mode">
                    {mode.effective === "split" ? "prefill/decode split with page handoff" : "unified (one context)"}
                    {mode.effective !== mode.requested && <> — {mode.requested} was asked for{mode.reason !== undefined && `: ${mode.reason}`}</>}
                    {mode.effective === mode.requested && mode.reason !== undefined && <> — {mode.reason}</>}
                </dd>
                <dt>Window</dt>
                <dd data-fact="window">
                    {formatCount(contextWindow.limit)} tokens per workspace
                    {contextWindow.clamped
                        ? ` (clamped from ${formatCount(contextWindow.configured)}: the measured ${contextWindow.boundBy} capacity is smaller)`
                        : `, set by the ${contextWindow.boundBy}`}
                </dd>
                <dt>Capacities</dt>
                <dd data-fact="capacities">
                    window {formatCount(capacities.window)} · prefill {formatCount(capacities.prefill)} · decode {formatCount(capacities.decode)} · pool {formatCount(capacities.pool)} tokens
                </dd>
                <dt>Decode sequences</dt>
                <dd>{formatCount(info.numDecodeSequences)} (more workspaces swap to pages)</dd>
                <dt>Pool</dt>
                <dd>{formatCount(info.numPages)} pages × {formatCount(info.pageTokens)} tokens</dd>
            </dl>
            <p className="panel-note">This server runs one model, chosen when it started. Opening and downloading models from here is not available yet.</p>
        </div>
    );
}
