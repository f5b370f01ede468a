import { useCallback, useEffect, useState } from "react";
import type {
    CatalogueModelView,
    FitBasis,
    FitVerdict,
    MachineMemory,
    ModelCatalogueView,
    ModelSearchResult,
    RepoFilesResult
} from "../../contract/modelCatalogue.js";
import { catalogueContextSizes, formatGb } from "../../contract/modelCatalogue.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useEngineStore } from "../stores/engineStore.js";
import { formatCount } from "../util/formatCount.js";
import type { ModelController } from "./ModelController.js";
import "./ModelCatalogue.css";

const basisText: Readonly<Record<FitBasis, string>> = {
    header: "from the file's own header (it is in the library)",
    catalogue: "from the catalogue's architecture numbers",
    size: "from the file's size alone"
};

/**
 * The model catalogue (rpcSpec modelCatalogue) and Hugging Face search (searchModels,
 * modelRepoFiles): every file with the host's "fits this machine" verdict, and a Download that
 * goes through the model panel's download path (startDownload: its size cap, disk check and names).
 */
export function ModelCatalogue({ controller, disabled }: { readonly controller: ModelController; readonly disabled: boolean }) {
    const { rpc } = useAppServices();
    const engineWindow = useEngineStore((state) => state.info?.window.limit);
    const [contextSize, setContextSize] = useState<number | undefined>(undefined);
    const [view, setView] = useState<ModelCatalogueView | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    const effectiveContext = contextSize ?? engineWindow;

    const refresh = useCallback(async (): Promise<void> => {
        try {
            setView(await rpc.call("modelCatalogue", effectiveContext === undefined ? {} : { contextSize: effectiveContext }));
            setError(undefined);
        } catch (caught) {
            setError(toRpcError(caught).message);
        }
    }, [rpc, effectiveContext]);
    useEffect(() => void refresh(), [refresh]);

    return (
        <section
            className="model-catalogue"
            aria-labelledby="model-catalogue-heading"
            data-state={view === undefined ? "loading" : "ready"}
        >
            <h3 id="model-catalogue-heading">Catalogue</h3>
            <form
                className="catalogue-context"
                onSubmit={(event) => {
                    event.preventDefault();
                    void refresh();
                }}
            >
                <label htmlFor="catalogue-context">Context for the verdicts (tokens)</label>
                <input
                    id="catalogue-context"
                    type="number"
                    min={catalogueContextSizes.min}
                    max={catalogueContextSizes.max}
                    step={256}
                    value={effectiveContext ?? ""}
                    onChange={(event) => {
                        const value = Number(event.currentTarget.value);
                        if (Number.isInteger(value) && value >= catalogueContextSizes.min && value <= catalogueContextSizes.max) {
                            setContextSize(value);
                        }
                    }}
                />
            </form>
            {error !== undefined && (
                <p className="model-error" role="alert">
                    <strong>The catalogue could not be read.</strong> {error}
                </p>
            )}
            {view !== undefined && (
                <>
                    <p
                        className="catalogue-machine"
                        data-free-ram-bytes={view.machine.freeRamBytes}
                        data-free-vram-bytes={view.machine.vram?.freeBytes ?? ""}
                    >
                        {machineText(view.machine)}
                        {view.vramNote !== undefined && <> {view.vramNote}</>}
                    </p>
                    <ul className="catalogue-models" aria-label="Catalogue models" data-context-size={view.contextSize}>
                        {view.models.map((model) => (
                            <CatalogueModel key={model.id} model={model} controller={controller} disabled={disabled} />
                        ))}
                    </ul>
                    <p className="catalogue-source">
                        Sizes and architectures: {view.source}, recorded {view.recordedOn}.
                    </p>
                </>
            )}
            <HuggingFaceSearch controller={controller} disabled={disabled} />
        </section>
    );
}

function machineText(machine: MachineMemory): string {
    const ram = `This machine: ${formatGb(machine.freeRamBytes)} of ${formatGb(machine.totalRamBytes)} RAM free`;
    return machine.vram === undefined
        ? `${ram}.`
        : `${ram}; ${formatGb(machine.vram.freeBytes)} of ${formatGb(machine.vram.totalBytes)} VRAM free.`;
}

function CatalogueModel({
    model,
    controller,
    disabled
}: {
    readonly model: CatalogueModelView;
    readonly controller: ModelController;
    readonly disabled: boolean;
}) {
    const { architecture } = model;
    return (
        <li className="catalogue-model" data-model-id={model.id}>
            <details>
                <summary>
                    <span className="catalogue-model-name">{model.name}</span> <span className="catalogue-model-repo">{model.repo}</span>
                </summary>
                <p className="catalogue-architecture">
                    {architecture.numLayers} layers, {architecture.numKvHeads} KV heads of {architecture.headSize}, trained for{" "}
                    {formatCount(architecture.trainContextSize)} tokens
                </p>
                <ul className="catalogue-files" aria-label={`Files of ${model.name}`}>
                    {model.files.map((file) => (
                        <FileRow
                            key={file.fileName}
                            label={file.quant}
                            fileName={file.fileName}
                            sizeBytes={file.sizeBytes}
                            fit={file.fit}
                            source={file.downloadSource}
                            controller={controller}
                            disabled={disabled}
                        />
                    ))}
                </ul>
            </details>
        </li>
    );
}

function FileRow(props: {
    readonly label: string;
    readonly fileName: string;
    readonly sizeBytes: number;
    readonly fit: FitVerdict;
    readonly source: string;
    readonly controller: ModelController;
    readonly disabled: boolean;
}) {
    const { fit } = props;
    return (
        <li
            className="catalogue-file"
            data-file-name={props.fileName}
            data-size-bytes={props.sizeBytes}
            data-fit={fit.kind}
            data-need-bytes={fit.needBytes}
            data-basis={fit.basis}
        >
            <span className="catalogue-file-name" title={props.fileName}>
                {props.label}
            </span>
            <span className="catalogue-file-size">{formatGb(props.sizeBytes)}</span>
            <span
                className={`catalogue-fit catalogue-fit-${fit.kind}`}
                title={`Weights ${formatGb(fit.weightsBytes)} + KV ${formatGb(fit.kvBytes)}, ${basisText[fit.basis]}.`}
            >
                {fit.text}
            </span>
            <button
                type="button"
                disabled={props.disabled}
                onClick={() => void props.controller.startDownload(props.source)}
                aria-label={`Download ${props.fileName}`}
            >
                Download
            </button>
        </li>
    );
}

/** Hugging Face search: GGUF repositories by name, then a repository's files with verdicts by size. */
function HuggingFaceSearch({ controller, disabled }: { readonly controller: ModelController; readonly disabled: boolean }) {
    const { rpc } = useAppServices();
    const [query, setQuery] = useState("");
    const [result, setResult] = useState<ModelSearchResult | undefined>(undefined);
    const [files, setFiles] = useState<RepoFilesResult | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    const [searching, setSearching] = useState(false);
    const search = async (): Promise<void> => {
        setSearching(true);
        setFiles(undefined);
        try {
            setResult(await rpc.call("searchModels", { query }));
            setError(undefined);
        } catch (caught) {
            setError(toRpcError(caught).message);
        } finally {
            setSearching(false);
        }
    };
    const openRepo = async (repo: string): Promise<void> => {
        try {
            setFiles(await rpc.call("modelRepoFiles", { repo }));
            setError(undefined);
        } catch (caught) {
            setError(toRpcError(caught).message);
        }
    };
    return (
        <div className="catalogue-search">
            <form
                className="model-open"
                onSubmit={(event) => {
                    event.preventDefault();
                    void search();
                }}
            >
                <label htmlFor="catalogue-search">Search Hugging Face for GGUF models</label>
                <input
                    id="catalogue-search"
                    type="search"
                    value={query}
                    autoComplete="off"
                    placeholder="qwen3, llama 3.2, gemma…"
                    onChange={(event) => setQuery(event.currentTarget.value)}
                />
                <div className="model-actions">
                    <button type="submit" disabled={searching || query.trim() === ""} aria-label="Search Hugging Face">
                        {searching ? "Searching…" : "Search"}
                    </button>
                </div>
            </form>
            {error !== undefined && (
                <p className="model-error" role="alert">
                    <strong>The search failed.</strong> {error}
                </p>
            )}
            {result?.kind === "offline" && (
                <p className="catalogue-offline" role="status">
                    {result.message}
                </p>
            )}
            {result?.kind === "online" &&
                (result.hits.length === 0 ? (
                    <p className="placeholder">No GGUF models on Hugging Face match “{result.query}”.</p>
                ) : (
                    <ul className="catalogue-hits" aria-label="Search hits">
                        {result.hits.map((hit) => (
                            <li key={hit.repo} className="catalogue-hit" data-repo={hit.repo}>
                                <button
                                    type="button"
                                    className="catalogue-hit-repo"
                                    onClick={() => void openRepo(hit.repo)}
                                    aria-label={`Show the files of ${hit.repo}`}
                                >
                                    {hit.repo}
                                </button>{" "}
                                <span className="catalogue-hit-stats">
                                    {formatCount(hit.downloads)} downloads · {formatCount(hit.likes)} likes
                                </span>
                            </li>
                        ))}
                    </ul>
                ))}
            {files?.kind === "offline" && (
                <p className="catalogue-offline" role="status">
                    {files.message}
                </p>
            )}
            {files?.kind === "online" && (
                <ul className="catalogue-files" aria-label={`Files of ${files.repo}`} data-repo={files.repo}>
                    {files.files.length === 0 && <li className="placeholder">{files.repo} has no .gguf files.</li>}
                    {files.files.map((file) => (
                        <FileRow
                            key={file.fileName}
                            label={file.fileName}
                            fileName={file.fileName}
                            sizeBytes={file.sizeBytes}
                            fit={file.fit}
                            source={file.downloadSource}
                            controller={controller}
                            disabled={disabled}
                        />
                    ))}
                </ul>
            )}
        </div>
    );
}
