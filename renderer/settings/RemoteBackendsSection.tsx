import { useEffect, useState } from "react";
import { remoteBackendWarning, type BackendSettingView, type BackendView } from "../../contract/backends.js";
import type { AppSettingsView } from "../../contract/settings.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { formatCount } from "../util/formatCount.js";
import { announceBackendsChanged } from "./backendsChanged.js";

/** The form: a new backend, or the one being edited (its name fixed; an empty key keeps the one it has). */
interface Draft {
    readonly editing: string | null;
    readonly name: string;
    readonly url: string;
    readonly key: string;
    readonly removeKey: boolean;
    readonly model: string;
    readonly allowRemote: boolean;
}

const emptyDraft: Draft = { editing: null, name: "", url: "", key: "", removeKey: false, model: "", allowRemote: false };

/**
 * The remote backends (OpenAI-compatible servers) workspaces can run on: each with its URL, whether
 * a key is set (never the key), and what it answers now (listBackends: its models, or why it cannot
 * be asked); added, edited and removed here, in force at once. Headless with --backend, the command
 * line's stand for that run and this only lists them.
 */
export function RemoteBackendsSection({
    view,
    onView
}: {
    readonly view: AppSettingsView;
    readonly onView: (view: AppSettingsView) => void;
}) {
    const { rpc } = useAppServices();
    const { list, source, numStored } = view.backends;
    const editable = source === "settings";
    const [draft, setDraft] = useState<Draft>(emptyDraft);
    const [status, setStatus] = useState<ReadonlyMap<string, BackendView> | string>();
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<string>();
    // Asked again whenever the list in force changes (a backend added, edited or removed).
    const signature = JSON.stringify(list);
    useEffect(() => {
        let live = true;
        setStatus(undefined);
        rpc.call("listBackends", {}).then(
            (result) => live && setStatus(new Map(result.backends.map((backend) => [backend.name, backend]))),
            (failure: unknown) => live && setStatus(toRpcError(failure).message)
        );
        return () => {
            live = false;
        };
    }, [rpc, signature]);

    const run = (call: () => Promise<AppSettingsView>): void => {
        setBusy(true);
        setError(undefined);
        call()
            .then((next) => {
                onView(next);
                announceBackendsChanged();
            })
            .catch((failure: unknown) => setError(toRpcError(failure).message))
            .finally(() => setBusy(false));
    };
    const save = (): void =>
        run(async () => {
            const next = await rpc.call("setBackend", {
                name: draft.name.trim(),
                url: draft.url.trim(),
                model: draft.model.trim() === "" ? null : draft.model.trim(),
                ...(draft.key !== "" ? { key: draft.key } : draft.removeKey || draft.editing === null ? { key: null } : {}),
                allowRemote: draft.allowRemote
            });
            setDraft(emptyDraft);
            return next;
        });
    const remove = (name: string): void =>
        run(async () => {
            const next = await rpc.call("removeBackend", { name });
            setDraft((shown) => (shown.editing === name ? emptyDraft : shown));
            return next;
        });
    const edit = (backend: BackendSettingView): void =>
        setDraft({
            editing: backend.name,
            name: backend.name,
            url: backend.apiBase,
            key: "",
            removeKey: false,
            model: backend.model ?? "",
            allowRemote: backend.remote
        });
    const change = (part: Partial<Draft>): void => setDraft((current) => ({ ...current, ...part }));
    const editingHasKey = draft.editing !== null && list.some((backend) => backend.name === draft.editing && backend.hasKey);

    return (
        <section className="settings-section" aria-labelledby="backends-heading" data-backends-source={source}>
            <h3 id="backends-heading">Remote backends</h3>
            <p className="settings-help">
                OpenAI-compatible servers (llama-server, vLLM, SGLang, Ollama's <code>/v1</code>, another Kvault) a workspace can run on
                instead of this computer: choose one in a workspace's Runs on. Its chats are sent there, and its server keeps their KV.
            </p>
            {!editable && (
                <p className="settings-note" data-backends-note>
                    Given on the command line (--backend) for this run, so not editable here;{" "}
                    {numStored === 0
                        ? "settings.json has none of its own."
                        : `settings.json keeps its own ${numStored} for a start without --backend.`}
                </p>
            )}
            <ul className="settings-keys">
                {list.length === 0 && <li className="settings-help">No remote backends.</li>}
                {list.map((backend) => (
                    <li key={backend.name} data-backend={backend.name}>
                        <code>{backend.name}</code> at <code>{backend.apiBase}</code>
                        {backend.model !== null && (
                            <>
                                , model <code>{backend.model}</code> only
                            </>
                        )}
                        <span className="settings-help" data-backend-key>
                            {backend.keyEnv !== null ? `, key from $${backend.keyEnv}` : backend.hasKey ? ", key set" : ", no key"}
                        </span>{" "}
                        {editable && (
                            <>
                                <button
                                    type="button"
                                    className="link-button"
                                    disabled={busy}
                                    onClick={() => edit(backend)}
                                    aria-label={`Edit the backend ${backend.name}`}
                                >
                                    Edit
                                </button>{" "}
                                <button
                                    type="button"
                                    className="link-button"
                                    disabled={busy}
                                    onClick={() => remove(backend.name)}
                                    aria-label={`Remove the backend ${backend.name}`}
                                >
                                    Remove
                                </button>
                            </>
                        )}
                        <br />
                        <span className="settings-help" data-backend-status>
                            {statusLine(status, backend.name)}
                        </span>
                        {backend.warning !== null && (
                            <>
                                <br />
                                <span className="settings-note" data-backend-warning>
                                    {backend.warning}
                                </span>
                            </>
                        )}
                    </li>
                ))}
            </ul>
            {editable && (
                <form
                    className="settings-form"
                    aria-label={draft.editing === null ? "Add a remote backend" : `Edit the backend ${draft.editing}`}
                    onSubmit={(event) => {
                        event.preventDefault();
                        save();
                    }}
                >
                    <label htmlFor="backend-name">
                        Name (letters, digits, _ or -; its models are NAME/&lt;model id&gt; in Kvault's API)
                    </label>
                    <input
                        id="backend-name"
                        value={draft.name}
                        maxLength={40}
                        disabled={draft.editing !== null}
                        onChange={(event) => change({ name: event.currentTarget.value })}
                    />
                    <label htmlFor="backend-url">URL (its OpenAI base URL, e.g. http://127.0.0.1:8000/v1)</label>
                    <input
                        id="backend-url"
                        value={draft.url}
                        maxLength={2048}
                        onChange={(event) => change({ url: event.currentTarget.value })}
                    />
                    <label htmlFor="backend-key">
                        {editingHasKey ? "Key (empty: keep the one set)" : "Key (optional; kept in settings.json, never shown again)"}
                    </label>
                    <input
                        id="backend-key"
                        type="password"
                        autoComplete="off"
                        value={draft.key}
                        maxLength={4096}
                        onChange={(event) => change({ key: event.currentTarget.value })}
                    />
                    {editingHasKey && (
                        <label>
                            <input
                                type="checkbox"
                                checked={draft.removeKey}
                                onChange={(event) => change({ removeKey: event.currentTarget.checked })}
                            />{" "}
                            Remove its key
                        </label>
                    )}
                    <label htmlFor="backend-model">Model (optional: offer this model id only; empty: every model it lists)</label>
                    <input
                        id="backend-model"
                        value={draft.model}
                        maxLength={512}
                        onChange={(event) => change({ model: event.currentTarget.value })}
                    />
                    <label>
                        <input
                            type="checkbox"
                            checked={draft.allowRemote}
                            onChange={(event) => change({ allowRemote: event.currentTarget.checked })}
                        />{" "}
                        Allow beyond this machine
                    </label>
                    {draft.allowRemote && (
                        <p className="settings-note" data-backend-form-warning>
                            {remoteBackendWarning({ name: draft.name.trim() || "NAME", apiBase: draft.url.trim() || "its URL" })}
                        </p>
                    )}
                    <div className="settings-actions">
                        <button
                            type="submit"
                            disabled={busy || draft.name.trim() === "" || draft.url.trim() === ""}
                            aria-label={draft.editing === null ? "Add the backend" : `Save the backend ${draft.editing}`}
                        >
                            {draft.editing === null ? "Add the backend" : "Save"}
                        </button>
                        {draft.editing !== null && (
                            <button type="button" onClick={() => setDraft(emptyDraft)} aria-label="Cancel the edit">
                                Cancel
                            </button>
                        )}
                    </div>
                </form>
            )}
            {error !== undefined && (
                <p className="settings-error" role="alert">
                    {error}
                </p>
            )}
        </section>
    );
}

/** What a backend answers now: its models (with the window it states), or why it cannot be asked. */
function statusLine(status: ReadonlyMap<string, BackendView> | string | undefined, name: string): string {
    if (status === undefined) {
        return "Asking it…";
    }
    if (typeof status === "string") {
        return `The backends could not be listed: ${status}`;
    }
    const backend = status.get(name);
    if (backend === undefined) {
        return "Asking it…";
    }
    if (backend.error !== undefined) {
        return `Cannot be asked: ${backend.error.message}`;
    }
    if (backend.models.length === 0) {
        return "Answers, but lists no models.";
    }
    return `Models: ${backend.models.map((model) => `${model.id}${model.window === undefined ? "" : ` (window ${formatCount(model.window.tokens)})`}`).join(", ")}`;
}
