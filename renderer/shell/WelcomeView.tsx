import { useEffect, useState } from "react";
import { Download, Sparkles } from "lucide-react";
import { formatGb, type ModelCatalogueView } from "../../contract/modelCatalogue.js";
import { useAppServices } from "../AppServices.js";
import { isDemoModel, type CatalogueChoice } from "../chat/demoModelSelectors.js";
import { fittingFiles, MAX_WELCOME_CHOICES } from "../chat/fittingFiles.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useModelStore } from "../stores/modelStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import type { Workspace } from "../workspaces/Workspace.js";
import "./WelcomeView.css";

/** Set once the user says they will try the demo model: the welcome is for a first run, not every run. */
const WELCOME_DISMISSED_KEY = "kvault.welcomeDismissed";

/**
 * The first run's welcome, in an empty chat while only the built-in demo model runs: the catalogue's
 * models that fit this machine (its fit verdicts), each one click from a download with its progress;
 * once done the model is loaded and a new chat on it opens, its message box focused.
 */
export function WelcomeView({ workspace }: { readonly workspace: Workspace }) {
    const info = useEngineStore((state) => state.info);
    const [dismissed, setDismissed] = useState(() => globalThis.localStorage?.getItem(WELCOME_DISMISSED_KEY) === "true");
    if (!isDemoModel(info) || dismissed || workspace.messages.length > 0) {
        return null;
    }
    return (
        <WelcomeOffer
            contextSize={info?.window.limit}
            onDismiss={() => {
                globalThis.localStorage?.setItem(WELCOME_DISMISSED_KEY, "true");
                setDismissed(true);
            }}
        />
    );
}

function WelcomeOffer({ contextSize, onDismiss }: { readonly contextSize: number | undefined; readonly onDismiss: () => void }) {
    const { rpc, model: controller } = useAppServices();
    const [catalogue, setCatalogue] = useState<ModelCatalogueView | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    const [chosen, setChosen] = useState<CatalogueChoice | undefined>(undefined);
    const source = chosen?.file.downloadSource;
    const download = useModelStore((state) =>
        source === undefined ? undefined : state.downloads.find((entry) => entry.source === source)
    );

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

    // Once the chosen file is on disk: load it, then open a chat on it (the message box takes the focus).
    const donePath = download?.state === "done" ? download.path : undefined;
    const modelName = chosen?.model.name;
    useEffect(() => {
        if (donePath === undefined || modelName === undefined) {
            return;
        }
        void controller.load(donePath).then((loaded) => {
            if (!loaded) {
                return;
            }
            const workspaces = useWorkspaceStore.getState();
            const made = workspaces.create();
            workspaces.rename(made.id, `Chat with ${modelName}`);
            requestAnimationFrame(() => document.querySelector<HTMLTextAreaElement>('#view-chats textarea[aria-label="Message"]')?.focus());
        });
    }, [controller, donePath, modelName]);

    const choices = catalogue === undefined ? [] : fittingFiles(catalogue, MAX_WELCOME_CHOICES);
    return (
        <section className="welcome-view" aria-labelledby="welcome-title">
            <h2 id="welcome-title">
                <Sparkles aria-hidden="true" size={18} /> Welcome to Kvault
            </h2>
            <p>Pick a model that fits this machine: Kvault downloads it, loads it and opens a chat on it.</p>
            {error !== undefined && <p className="inline-error">The catalogue could not be read: {error}</p>}
            {catalogue === undefined && error === undefined && <p className="placeholder">Reading the catalogue…</p>}
            {catalogue !== undefined && choices.length === 0 && (
                <p>No catalogue model fits this machine&apos;s free memory; open a smaller GGUF in the Models view.</p>
            )}
            <ul className="welcome-choices">
                {choices.map((choice) => {
                    const label = `${choice.model.name} ${choice.file.quant} (${formatGb(choice.file.sizeBytes)})`;
                    return (
                        <li key={choice.file.downloadSource} className="welcome-choice" data-file-name={choice.file.fileName}>
                            <span className="welcome-choice-name">{label}</span>
                            <span className="welcome-choice-fit">{choice.file.fit.text}</span>
                            <button
                                type="button"
                                className="primary"
                                disabled={chosen !== undefined}
                                aria-label={`Download ${label} and chat with it`}
                                onClick={() => {
                                    setChosen(choice);
                                    void controller.startDownload(choice.file.downloadSource);
                                }}
                            >
                                <Download aria-hidden="true" size={14} /> Download
                            </button>
                        </li>
                    );
                })}
            </ul>
            {download !== undefined && chosen !== undefined && (
                <div className="welcome-progress" role="status" data-state={download.state}>
                    <progress
                        max={download.totalBytes || 1}
                        value={download.downloadedBytes}
                        aria-label={`Download of ${chosen.model.name}`}
                    />{" "}
                    {download.state === "downloading" &&
                        `Downloading ${chosen.model.name}: ${formatGb(download.downloadedBytes)} of ${formatGb(download.totalBytes)}…`}
                    {download.state === "done" && `Downloaded ${chosen.model.name}; loading it.`}
                    {download.state === "failed" && `The download failed: ${download.error?.message ?? "no reason given"}.`}
                    {download.state === "cancelled" && "The download was cancelled."}
                </div>
            )}
            <button
                type="button"
                className="welcome-dismiss"
                aria-label="Try the demo model first, without the welcome"
                onClick={onDismiss}
            >
                Try the demo model first
            </button>
        </section>
    );
}
