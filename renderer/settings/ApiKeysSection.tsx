import { useState } from "react";
import type { AppSettingsView } from "../../contract/settings.js";
import { useAppServices } from "../AppServices.js";
import { CopyButton } from "../chat/CopyButton.js";
import { toRpcError } from "../rpc/RpcError.js";

/**
 * The API keys beside the default one, each with workspaces of its own (`api@ID:`): created here
 * (its secret shown once, to copy), listed by id, and revoked here, which takes effect at once.
 */
export function ApiKeysSection({ view, onView }: { readonly view: AppSettingsView; readonly onView: (view: AppSettingsView) => void }) {
    const { rpc } = useAppServices();
    const [id, setId] = useState("");
    const [created, setCreated] = useState<{ readonly id: string; readonly key: string }>();
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<string>();

    const run = (call: () => Promise<void>): void => {
        setBusy(true);
        setError(undefined);
        call()
            .catch((failure: unknown) => setError(toRpcError(failure).message))
            .finally(() => setBusy(false));
    };
    const create = (): void =>
        run(async () => {
            const answer = await rpc.call("createApiKey", { id: id.trim() });
            setCreated({ id: answer.id, key: answer.key });
            setId("");
            onView(answer.view);
        });
    const revoke = (keyId: string): void =>
        run(async () => {
            onView(await rpc.call("revokeApiKey", { id: keyId }));
            setCreated((shown) => (shown?.id === keyId ? undefined : shown));
        });

    return (
        <section className="settings-section" aria-labelledby="api-keys-heading">
            <h3 id="api-keys-heading">API keys</h3>
            <p className="settings-help">
                Each key's clients get workspace names of their own: another key's <code>user</code> never reaches theirs. The default key
                keeps the shared names (<code>api:</code>).
            </p>
            <ul className="settings-keys">
                {view.apiKeys.length === 0 && <li className="settings-help">No other keys.</li>}
                {view.apiKeys.map((key) => (
                    <li key={key.id} data-api-key={key.id}>
                        <code>{key.id}</code>{" "}
                        {key.source === "settings" ? (
                            <>
                                <span className="settings-help">created {key.createdAt?.slice(0, 16).replace("T", " ")}</span>{" "}
                                <button
                                    type="button"
                                    className="link-button"
                                    disabled={busy}
                                    onClick={() => revoke(key.id)}
                                    aria-label={`Revoke the API key ${key.id}`}
                                >
                                    Revoke
                                </button>
                            </>
                        ) : (
                            <span className="settings-help">from --extra-api-key, for this run</span>
                        )}
                    </li>
                ))}
            </ul>
            {created !== undefined && (
                <p className="settings-created" data-created-key={created.id}>
                    The key for <code>{created.id}</code>, shown this once: <code data-secret="true">{created.key}</code>{" "}
                    <CopyButton text={created.key} label={`Copy the API key ${created.id}`} />
                </p>
            )}
            <form
                className="settings-form settings-inline"
                onSubmit={(event) => {
                    event.preventDefault();
                    create();
                }}
            >
                <label htmlFor="api-key-id">New key's id (letters, digits, _ or -)</label>
                <input id="api-key-id" value={id} maxLength={40} onChange={(event) => setId(event.currentTarget.value)} />
                <button type="submit" disabled={busy || id.trim() === ""} aria-label="Create a key">
                    Create a key
                </button>
            </form>
            {error !== undefined && (
                <p className="settings-error" role="alert">
                    {error}
                </p>
            )}
        </section>
    );
}
