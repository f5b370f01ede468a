import { useState } from "react";
import { modelPoolSettingLimits, type ModelPoolSettings, type ModelPoolSettingsView } from "../../contract/modelPoolSettings.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useRpcWhenOpen } from "../rpc/useRpcWhenOpen.js";

/**
 * The local models beside the engine's (a workspace's own model, the API's `model`): how long an
 * unused one stays loaded, what all of them may take together, and the folders searched for GGUF
 * files beside LM Studio's, Ollama's and Hugging Face's (get/setModelPoolSettings). In force at once;
 * a value the command line gave for this run is shown with its flag and cannot be changed here.
 */
export function ModelPoolSection() {
    const { loaded, show } = useRpcWhenOpen((rpc) => rpc.call("getModelPoolSettings", {}));
    if (loaded.kind !== "ready") {
        return (
            <section className="settings-section" aria-labelledby="model-pool-heading">
                <h3 id="model-pool-heading">Local models</h3>
                <p className="placeholder">{loaded.kind === "loading" ? "Reading the local models' settings…" : loaded.message}</p>
            </section>
        );
    }
    // keyed by what is saved, so that the form starts again from what the host answered
    return <ModelPoolForm key={JSON.stringify(loaded.view.saved)} view={loaded.view} onView={show} />;
}

function ModelPoolForm({ view, onView }: { readonly view: ModelPoolSettingsView; readonly onView: (view: ModelPoolSettingsView) => void }) {
    const { rpc } = useAppServices();
    const { saved, running, fromCommandLine, machineMemoryMb } = view;
    const [idleSeconds, setIdleSeconds] = useState(String(saved.modelIdleSeconds));
    const [memoryMb, setMemoryMb] = useState(saved.modelsMemoryMb === null ? "" : String(saved.modelsMemoryMb));
    const [folders, setFolders] = useState(saved.modelsFolders.join("\n"));
    const [saving, setSaving] = useState(false);
    const [error, setError] = useState<string | undefined>(undefined);
    const limits = modelPoolSettingLimits;

    const save = (): void => {
        const change: Partial<{ -readonly [K in keyof ModelPoolSettings]: ModelPoolSettings[K] }> = {};
        if (fromCommandLine.modelIdleSeconds === undefined) {
            change.modelIdleSeconds = Number(idleSeconds);
        }
        if (fromCommandLine.modelsMemoryMb === undefined) {
            change.modelsMemoryMb = memoryMb.trim() === "" ? null : Number(memoryMb);
        }
        if (fromCommandLine.modelsFolders === undefined) {
            change.modelsFolders = folders
                .split("\n")
                .map((folder) => folder.trim())
                .filter((folder) => folder !== "");
        }
        setSaving(true);
        setError(undefined);
        rpc.call("setModelPoolSettings", change)
            .then(onView, (failure: unknown) => setError(toRpcError(failure).message))
            .finally(() => setSaving(false));
    };
    const given = (name: keyof ModelPoolSettings): string | undefined =>
        fromCommandLine[name] === undefined ? undefined : `given on the command line for this run (${fromCommandLine[name]})`;
    return (
        <section className="settings-section" aria-labelledby="model-pool-heading" data-model-idle-seconds={running.modelIdleSeconds}>
            <h3 id="model-pool-heading">Local models</h3>
            <p className="settings-help">
                A workspace can run on a model of its own: it loads on the first turn that needs it, and unloads after the idle time. Before
                each load Kvault plans its memory within the budget, unloading the least recently used idle model to make room, or refusing
                with the numbers.
            </p>
            <form
                className="settings-form"
                onSubmit={(event) => {
                    event.preventDefault();
                    save();
                }}
            >
                <label htmlFor="model-idle-seconds">
                    Unload a model after this many seconds without a turn ({limits.modelIdleSeconds.min} to{" "}
                    {limits.modelIdleSeconds.max.toLocaleString("en-US")}; Ollama's default is 300)
                </label>
                <input
                    id="model-idle-seconds"
                    type="number"
                    min={limits.modelIdleSeconds.min}
                    max={limits.modelIdleSeconds.max}
                    value={idleSeconds}
                    disabled={given("modelIdleSeconds") !== undefined}
                    title={given("modelIdleSeconds")}
                    onChange={(event) => setIdleSeconds(event.currentTarget.value)}
                />
                <label htmlFor="models-memory-mb">
                    Memory budget of every loaded model together, MiB (empty: this machine's {machineMemoryMb.toLocaleString("en-US")} MiB)
                </label>
                <input
                    id="models-memory-mb"
                    type="number"
                    min={limits.modelsMemoryMb.min}
                    max={limits.modelsMemoryMb.max}
                    value={memoryMb}
                    placeholder={`${machineMemoryMb}`}
                    disabled={given("modelsMemoryMb") !== undefined}
                    title={given("modelsMemoryMb")}
                    onChange={(event) => setMemoryMb(event.currentTarget.value)}
                />
                <label htmlFor="models-folders">
                    Model folders, one full path a line (beside LM Studio's, Ollama's and Hugging Face's; at most {limits.maxFolders})
                </label>
                <textarea
                    id="models-folders"
                    rows={3}
                    value={folders}
                    disabled={given("modelsFolders") !== undefined}
                    title={given("modelsFolders")}
                    onChange={(event) => setFolders(event.currentTarget.value)}
                />
                {Object.keys(fromCommandLine).length > 0 && (
                    <p className="settings-help">
                        Given on the command line for this run, over these: {Object.values(fromCommandLine).join(", ")}.
                    </p>
                )}
                <div className="settings-actions">
                    <button type="submit" disabled={saving} aria-label="Save the local models' settings">
                        {saving ? "Saving…" : "Save"}
                    </button>
                </div>
            </form>
            {error !== undefined && (
                <p className="settings-error" role="alert">
                    {error}
                </p>
            )}
        </section>
    );
}
