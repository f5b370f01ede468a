import type { AppSettingsView } from "../../contract/settings.js";
import { useRevealOnRequest } from "../appCommands/useRevealOnRequest.js";
import { CopyButton } from "../chat/CopyButton.js";
import { useRpcWhenOpen } from "../rpc/useRpcWhenOpen.js";
import { ApiKeysSection } from "./ApiKeysSection.js";
import { EngineSettingsSection } from "./EngineSettingsSection.js";
import { LocalApiSection } from "./LocalApiSection.js";
import { ModelPoolSection } from "./ModelPoolSection.js";
import { McpServersSection } from "../mcp/McpServersSection.js";
import { RemoteBackendsSection } from "./RemoteBackendsSection.js";
import { ThemeSection } from "../shell/ThemeSection.js";
import "./SettingsPanel.css";

/**
 * The settings screen, in two parts: the Server view's (the local API, its keys, the remote backends)
 * and the Settings view's (MCP servers, engine settings, model and state, theme). It is the same in the desktop app and the headless server's page (getSettings):
 * the API and its keys, the remote backends, the engine settings with the memory they take, the model loaded at start
 * and the state directory. Everything is kept in `<state directory>/settings.json`.
 */
export function SettingsPanel({ part }: { readonly part: "server" | "settings" }) {
    const { loaded, show } = useRpcWhenOpen((rpc) => rpc.call("getSettings", {}));
    // Kvault › Settings… opens this panel (renderer/appCommands/).
    const revealRef = useRevealOnRequest("settings");

    if (loaded.kind !== "ready") {
        return (
            <p className="placeholder" ref={revealRef}>
                {loaded.kind === "loading" ? "Reading the settings…" : loaded.message}
            </p>
        );
    }
    const { view } = loaded;
    const onView = (next: AppSettingsView): void => show(next);
    return (
        <div ref={revealRef} className="settings-panel" data-settings-host={view.host} data-settings-part={part}>
            {part === "server" ? (
                <>
                    <LocalApiSection view={view} onView={onView} />
                    <ApiKeysSection view={view} onView={onView} />
                    <RemoteBackendsSection view={view} onView={onView} />
                </>
            ) : (
                <SettingsPart view={view} onView={onView} />
            )}
        </div>
    );
}

/** The Settings view's sections. */
function SettingsPart({ view, onView }: { readonly view: AppSettingsView; readonly onView: (next: AppSettingsView) => void }) {
    return (
        <>
            <ThemeSection />
            <McpServersSection />
            <EngineSettingsSection view={view} onView={onView} />
            <ModelPoolSection />
            <section className="settings-section" aria-labelledby="state-heading">
                <h3 id="state-heading">Model and state</h3>
                <p>
                    Model at start: <code>{view.modelPath ?? "the built-in demo model"}</code>{" "}
                    <span className="settings-help">(the one loaded last; switch it in the Models view or a chat's header)</span>
                </p>
                <p data-state-directory={view.stateDirectory}>
                    State directory: <code>{view.stateDirectory}</code>{" "}
                    <CopyButton text={view.stateDirectory} label="Copy the state directory's path" />
                </p>
                <p className="settings-help">
                    Chats, models and <code>{view.settingsFile}</code> live there.
                </p>
                {view.problems.length > 0 && (
                    <ul className="settings-problems" aria-label="Problems reading settings.json">
                        {view.problems.map((problem) => (
                            <li key={problem}>{problem}</li>
                        ))}
                    </ul>
                )}
            </section>
        </>
    );
}
