import { useEffect, useState } from "react";
import { formatGb, type ModelCatalogueView } from "../../contract/modelCatalogue.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useModelStore } from "../stores/modelStore.js";
import { isDemoModel, smallestFittingFile } from "./demoModelSelectors.js";
import "./DemoModelNote.css";

/**
 * Shown in the chat while the built-in demo model runs: its random weights write noise, which a
 * first-time user would take for a broken app. One button downloads the catalogue's smallest file
 * that fits this machine (the catalogue's own download path) and loads it once it is done.
 */
export function DemoModelNote() {
    const info = useEngineStore((state) => state.info);
    return isDemoModel(info) ? <DemoModelOffer contextSize={info?.window.limit} /> : null;
}

function DemoModelOffer({ contextSize }: { readonly contextSize: number | undefined }) {
    const { rpc, model: controller } = useAppServices();
    const [catalogue, setCatalogue] = useState<ModelCatalogueView | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    const [source, setSource] = useState<string | undefined>(undefined);
    const download = useModelStore((state) =>
        source === undefined ? undefined : state.downloads.find((entry) => entry.source === source)
    );
    const startError = useModelStore((state) => state.download.error);

    useEffect(() => {
        let current = true;
        rpc.call("modelCatalogue", contextSize === undefined ? {} : { contextSize }).then(
            (view) => current && setCatalogue(view),
            (caught: unknown) => current && setError(toRpcError(caught).message)
        );
        return () => {
            current = false;
        };
    }, [rpc, contextSize]);

    // Loaded once, when the download this note started is done, as the model panel's Load would.
    const donePath = download?.state === "done" ? download.path : undefined;
    useEffect(() => {
        if (donePath !== undefined) {
            void controller.load(donePath);
        }
    }, [controller, donePath]);

    const choice = catalogue === undefined ? undefined : smallestFittingFile(catalogue);
    const label = choice === undefined ? "" : `${choice.model.name} ${choice.file.quant} (${formatGb(choice.file.sizeBytes)})`;
    return (
        <aside className="demo-model-note" role="note" aria-label="About the demo model">
            <p>
                <strong>This is Kvault's built-in demo model.</strong> Its weights are random, so its answers are noise: the app is working.
                Load a real model to get real answers.
            </p>
            {error !== undefined && <p className="demo-model-error">The catalogue could not be read: {error}</p>}
            {catalogue !== undefined && choice === undefined && (
                <p>No catalogue model fits this machine's free memory; open a smaller GGUF in the Model panel.</p>
            )}
            {choice !== undefined && download === undefined && (
                <button
                    type="button"
                    data-file-name={choice.file.fileName}
                    onClick={() => {
                        setSource(choice.file.downloadSource);
                        void controller.startDownload(choice.file.downloadSource);
                    }}
                    aria-label={`Download and load ${label}, the smallest catalogue model that fits this machine`}
                >
                    Download and load {label}
                </button>
            )}
            {download !== undefined && (
                <p className="demo-model-download" role="status" data-state={download.state}>
                    {download.state === "downloading" &&
                        `Downloading ${label}: ${formatGb(download.downloadedBytes)} of ${formatGb(download.totalBytes)}…`}
                    {download.state === "done" && `Downloaded ${label}; loading it.`}
                    {download.state === "failed" && `The download of ${label} failed: ${download.error?.message ?? "no reason given"}.`}
                    {download.state === "cancelled" && `The download of ${label} was cancelled.`}
                </p>
            )}
            {source !== undefined && download === undefined && startError !== undefined && (
                <p className="demo-model-error" role="alert">
                    The download could not start: {startError.message}
                </p>
            )}
        </aside>
    );
}
