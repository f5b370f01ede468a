import { useEffect, useState } from "react";
import type { ModelDownload, ModelFacts } from "../../contract/models.js";
import { usePanelRequestStore } from "../appCommands/panelRequestStore.js";
import { useRevealOnRequest } from "../appCommands/useRevealOnRequest.js";
import { useAppServices } from "../AppServices.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useModelStore } from "../stores/modelStore.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useTurnStore } from "../stores/turnStore.js";
import { formatCount } from "../util/formatCount.js";
import type { ModelController } from "./ModelController.js";
import { ModelCatalogue } from "./ModelCatalogue.js";
import { ModelLibraryList } from "./ModelLibraryList.js";
import { downloadName, downloadPercent, downloadStatusText, estimateText, factRows, formatBytes } from "./modelText.js";
import "./ModelPanel.css";

/** The loaded model and the geometry the engine measured for it. */
export function ModelPanel() {
    const info = useEngineStore((state) => state.info);
    const infoError = useEngineStore((state) => state.infoError);
    // File › Open Model… opens this panel (renderer/appCommands/).
    const revealRef = useRevealOnRequest("model");
    if (info === undefined) {
        return (
            <p className="placeholder" ref={revealRef}>
                {infoError ?? "Waiting for the engine…"}
            </p>
        );
    }
    const { mode, window: contextWindow, capacities } = info;
    return (
        <div className="model-panel" ref={revealRef}>
            <dl className="facts" aria-label="Loaded model">
                <dt>Model</dt>
                <dd data-fact="model-name">{info.modelName}</dd>
                <dt>File</dt>
                <dd className="fact-path" title={info.modelPath}>
                    {info.modelPath}
                </dd>
                <dt>Backend</dt>
                <dd data-fact="backend">{info.backend}</dd>
                <dt>Mode</dt>
                <dd data-fact="mode">
                    {mode.effective === "split" ? "prefill/decode split with page handoff" : "unified (one context)"}
                    {mode.effective !== mode.requested && (
                        <>
                            {" "}
                            — {mode.requested} was asked for{mode.reason !== undefined && `: ${mode.reason}`}
                        </>
                    )}
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
                    window {formatCount(capacities.window)} · prefill {formatCount(capacities.prefill)} · decode{" "}
                    {formatCount(capacities.decode)} · pool {formatCount(capacities.pool)} tokens
                </dd>
                <dt>Decode sequences</dt>
                <dd>{formatCount(info.numDecodeSequences)} (more workspaces swap to pages)</dd>
                <dt>Pool</dt>
                <dd>
                    {formatCount(info.numPages)} pages × {formatCount(info.pageTokens)} tokens
                </dd>
                <dt>KV cache type</dt>
                <dd data-fact="kv-type">
                    {/* a page holds pageTokens positions of every layer's K and V, so this is the measured size of a token's KV */}
                    {info.kvCacheType.toUpperCase()}, {formatBytes(info.pageBytes / info.pageTokens)} per token (measured from llama.cpp's
                    own state)
                </dd>
            </dl>
            <ModelManager controller={useAppServices().model} />
        </div>
    );
}

/** Open a GGUF on the machine running Kvault: inspect it (facts, memory estimate), load it, or go back to the demo model. */
function ModelManager({ controller }: { readonly controller: ModelController }) {
    const { rpc } = useAppServices();
    // The path File › Open Model… chose last, so what is inspected is what the box shows.
    const [path, setPath] = useState(() => usePanelRequestStore.getState().modelFile ?? "");
    const menuModelFile = usePanelRequestStore((state) => state.modelFile);
    const menuRequest = usePanelRequestStore((state) => state.requests.model);
    useEffect(() => {
        if (menuModelFile !== undefined) {
            setPath(menuModelFile);
        }
    }, [menuModelFile, menuRequest]);
    const [browseError, setBrowseError] = useState<string | undefined>(undefined);
    const browse = async (): Promise<void> => {
        setBrowseError(undefined);
        try {
            const choice = await rpc.call("chooseModelFile", {});
            if (choice.kind === "chosen") {
                setPath(choice.path);
                await controller.inspect(choice.path);
            }
        } catch (error) {
            setBrowseError(toRpcError(error).message);
        }
    };
    /** The model a Load waits to be confirmed for, while turns are running. */
    const [confirming, setConfirming] = useState<string | undefined>(undefined);
    const inspection = useModelStore((state) => state.inspection);
    const loading = useModelStore((state) => state.loading);
    const numRunning = useTurnStore((state) => Object.keys(state.live).length);

    const load = (model: string): void => {
        if (controller.numRunningTurns() > 0) {
            setConfirming(model);
            return;
        }
        setConfirming(undefined);
        void controller.load(model);
    };
    const inspectionState = inspection.running
        ? "running"
        : inspection.facts !== undefined
          ? "done"
          : inspection.error !== undefined
            ? "error"
            : "idle";
    return (
        <section
            className="model-manager"
            aria-labelledby="model-manager-heading"
            data-inspect-state={inspectionState}
            data-load-state={loading.running ? "running" : loading.error !== undefined ? "error" : "idle"}
        >
            <h3 id="model-manager-heading">Open a model</h3>
            <form
                className="model-open"
                onSubmit={(event) => {
                    event.preventDefault();
                    void controller.inspect(path);
                }}
            >
                <label htmlFor="model-path">GGUF path on the machine running Kvault</label>
                <input
                    id="model-path"
                    type="text"
                    value={path}
                    spellCheck={false}
                    autoComplete="off"
                    placeholder="/home/me/models/model.gguf"
                    onChange={(event) => setPath(event.currentTarget.value)}
                />
                <div className="model-actions">
                    {window.kvault !== undefined && (
                        // The desktop app's native dialog; a browser page cannot give the host a path from the user's disk.
                        <button
                            type="button"
                            disabled={inspection.running}
                            onClick={() => void browse()}
                            aria-label="Choose a model file in a dialog"
                        >
                            Browse…
                        </button>
                    )}
                    <button type="submit" disabled={inspection.running} aria-label="Inspect the model file">
                        {inspection.running ? "Inspecting…" : "Inspect"}
                    </button>
                    <button
                        type="button"
                        disabled={loading.running || path.trim() === ""}
                        onClick={() => load(path.trim())}
                        aria-label="Load this model file"
                    >
                        Load
                    </button>
                    <button type="button" disabled={loading.running} onClick={() => load("tiny")} aria-label="Use the built-in demo model">
                        Use the built-in demo model
                    </button>
                </div>
            </form>
            {confirming !== undefined && (
                <div className="model-confirm" role="alertdialog" aria-labelledby="model-confirm-text">
                    <p id="model-confirm-text">
                        {numRunning === 1 ? "A turn is" : `${formatCount(numRunning)} turns are`} running. Loading{" "}
                        {confirming === "tiny" ? "the demo model" : confirming} ends {numRunning === 1 ? "it" : "them"}; you can send{" "}
                        {numRunning === 1 ? "it" : "them"} again after.
                    </p>
                    <div className="model-actions">
                        <button
                            type="button"
                            onClick={() => {
                                const model = confirming;
                                setConfirming(undefined);
                                void controller.load(model);
                            }}
                            aria-label="Load anyway, ending the running turns"
                        >
                            Load anyway
                        </button>
                        <button type="button" onClick={() => setConfirming(undefined)} aria-label="Cancel loading the model">
                            Cancel
                        </button>
                    </div>
                </div>
            )}
            {browseError !== undefined && (
                <p className="model-error" role="alert">
                    <strong>The file dialog failed.</strong> {browseError}
                </p>
            )}
            {loading.running && (
                <p className="placeholder" role="status">
                    Loading {loading.model === "tiny" ? "the built-in demo model" : loading.model}…
                </p>
            )}
            {loading.error !== undefined && (
                <p className="model-error" role="alert" data-error-code={loading.error.code}>
                    <strong>Could not load the model ({loading.error.code}).</strong> {loading.error.message}
                </p>
            )}
            {inspection.error !== undefined && (
                <p className="model-error" role="alert" data-error-code={inspection.error.code}>
                    <strong>Cannot use this file ({inspection.error.code}).</strong> {inspection.error.message}
                </p>
            )}
            {inspection.facts !== undefined && <FactsView facts={inspection.facts} />}
            <Downloads controller={controller} disabled={loading.running} onLoad={load} />
            <ModelLibraryList controller={controller} disabled={loading.running} onLoad={load} />
            <ModelCatalogue controller={controller} disabled={loading.running} />
        </section>
    );
}

/** Download a GGUF by URL or hf: reference into the host's models directory; progress, speed, cancel, resume, then load. */
function Downloads({
    controller,
    disabled,
    onLoad
}: {
    readonly controller: ModelController;
    readonly disabled: boolean;
    readonly onLoad: (model: string) => void;
}) {
    const [source, setSource] = useState("");
    const downloads = useModelStore((state) => state.downloads);
    const download = useModelStore((state) => state.download);
    useEffect(() => {
        void controller.refreshDownloads();
        return () => controller.stopPolling();
    }, [controller]);
    const start = async (): Promise<void> => {
        if (await controller.startDownload(source)) {
            setSource("");
        }
    };
    return (
        <div className="model-downloads">
            <form
                className="model-open"
                onSubmit={(event) => {
                    event.preventDefault();
                    void start();
                }}
            >
                <label htmlFor="model-download-source">Download a model (URL or hf: reference)</label>
                <input
                    id="model-download-source"
                    type="text"
                    value={source}
                    spellCheck={false}
                    autoComplete="off"
                    placeholder="hf:owner/repo:Q4_K_M or https://…/model.gguf"
                    onChange={(event) => setSource(event.currentTarget.value)}
                />
                <div className="model-actions">
                    <button type="submit" disabled={download.starting} aria-label="Download the model">
                        {download.starting ? "Starting…" : "Download"}
                    </button>
                </div>
            </form>
            {download.error !== undefined && (
                <p className="model-error" role="alert" data-error-code={download.error.code}>
                    <strong>Could not download ({download.error.code}).</strong> {download.error.message}
                </p>
            )}
            {downloads.length > 0 && (
                <ul className="model-download-list" aria-label="Downloads">
                    {downloads.map((item) => (
                        <DownloadRow key={item.id} download={item} controller={controller} disabled={disabled} onLoad={onLoad} />
                    ))}
                </ul>
            )}
        </div>
    );
}

function DownloadRow({
    download,
    controller,
    disabled,
    onLoad
}: {
    readonly download: ModelDownload;
    readonly controller: ModelController;
    readonly disabled: boolean;
    readonly onLoad: (model: string) => void;
}) {
    const name = downloadName(download);
    const percent = downloadPercent(download);
    return (
        <li className="model-download" data-download-state={download.state} data-download-id={download.id}>
            <span className="model-download-name" title={download.source}>
                {name}
            </span>
            {download.state === "downloading" && (
                <progress className="model-download-progress" max={100} value={percent} aria-label={`Download progress of ${name}`} />
            )}
            <span
                className={download.state === "failed" ? "model-download-status model-download-failed" : "model-download-status"}
                role={download.state === "failed" ? "alert" : undefined}
            >
                {downloadStatusText(download)}
            </span>
            {download.notice !== undefined && <span className="model-download-notice">{download.notice}</span>}
            <div className="model-actions">
                {download.state === "downloading" && (
                    <button
                        type="button"
                        onClick={() => void controller.cancelDownload(download.id)}
                        aria-label={`Cancel the download of ${name}`}
                    >
                        Cancel
                    </button>
                )}
                {download.resumable && (
                    <>
                        <button
                            type="button"
                            onClick={() => void controller.resumeDownload(download.id)}
                            aria-label={`Resume the download of ${name}`}
                        >
                            Resume
                        </button>
                        <button
                            type="button"
                            onClick={() => void controller.cancelDownload(download.id)}
                            aria-label={`Discard the partial download of ${name}`}
                        >
                            Discard
                        </button>
                    </>
                )}
                {download.state === "done" && (
                    <button
                        type="button"
                        disabled={disabled}
                        onClick={() => onLoad(download.path)}
                        aria-label={`Load the downloaded model ${name}`}
                    >
                        Load
                    </button>
                )}
            </div>
        </li>
    );
}

function FactsView({ facts }: { readonly facts: ModelFacts }) {
    const kvCacheType = useEngineStore((state) => state.info?.kvCacheType);
    return (
        <div className="model-facts" data-model-path={facts.path}>
            <dl className="facts" aria-label={`Facts of ${facts.fileName}`}>
                {factRows(facts, kvCacheType).map((row) => (
                    <div key={row.key} className="model-fact">
                        <dt>{row.label}</dt>
                        <dd data-fact={row.key}>{row.value}</dd>
                    </div>
                ))}
            </dl>
            <p className="model-estimate" data-fact="estimate">
                {estimateText(facts)}
            </p>
        </div>
    );
}
