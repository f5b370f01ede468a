// The settings screen's remote backends: settings.json's `backends` put in force in the host's live
// set (host/backends/Backends.ts) at start and on every change, unless the headless command line
// gave its own (`--backend`), which then stand for that run and cannot be changed here.
import { maxStoredBackends, remoteBackendWarning, type BackendsSettingView } from "../../contract/backends.js";
import { invariant } from "../../engine/index.js";
import { backendSummary, checkBackendEntry, type BackendConfig, type BackendEntryField } from "../backends/BackendConfig.js";
import type { Backends, BackendsPlan } from "../backends/Backends.js";
import type { StoredBackend } from "./KvaultSettings.js";
import { BackendSettingError, SettingFromCommandLineError } from "./settingsErrors.js";
import type { SettingsFile } from "./SettingsFile.js";

/** setBackend's params: a backend to add, or to put in place of the one of that name. */
export interface BackendChange {
    readonly name: string;
    readonly url: string;
    /** null or absent: every model the backend lists. */
    readonly model?: string | null;
    /** Absent: the key it has (none for a new backend); null: no key. */
    readonly key?: string | null;
    readonly allowRemote: boolean;
}

export interface BackendSettingsParts {
    readonly file: SettingsFile;
    /** The live set every part of the host routes through. */
    readonly backends: Backends;
    /** `--backend`'s for this run; empty or absent: settings.json's are in force. */
    readonly fromCommandLine?: readonly BackendConfig[];
    readonly log: (line: string) => void;
}

export class BackendSettings {
    constructor(private readonly parts: BackendSettingsParts) {
        const fromCommandLine = parts.fromCommandLine ?? [];
        if (fromCommandLine.length > 0 && parts.file.current.backends.length > 0) {
            parts.log(
                `Settings: --backend is given, so settings.json's ${parts.file.current.backends.length} backend(s) are not in force for this run.`
            );
        }
        parts.backends.replace(fromCommandLine.length > 0 ? fromCommandLine : configsOf(parts.file.current.backends));
    }

    get fromCommandLine(): boolean {
        return (this.parts.fromCommandLine ?? []).length > 0;
    }

    view(): BackendsSettingView {
        return {
            list: this.parts.backends.all().map(({ config }) => ({
                name: config.name,
                apiBase: config.apiBase,
                model: config.model ?? null,
                hasKey: config.key !== undefined,
                keyEnv: config.keyEnv ?? null,
                remote: config.remote,
                warning: config.remote ? remoteBackendWarning(config) : null
            })),
            source: this.fromCommandLine ? "command line" : "settings",
            numStored: this.parts.file.current.backends.length
        };
    }

    /** Checks `change` with `--backend`'s rules, saves it in settings.json, then puts it in force. Run one at a time (SettingsHost's queue). */
    async set(change: BackendChange): Promise<BackendsPlan> {
        this.#refuseFromCommandLine(`change the backend "${change.name}"`);
        const current = this.parts.file.current.backends;
        const existing = current.find((entry) => entry.name === change.name);
        const key = change.key === undefined ? existing?.key : (change.key ?? undefined);
        const model = change.model ?? undefined;
        const entry: StoredBackend = {
            name: change.name,
            url: change.url.trim(),
            ...(model === undefined ? {} : { model }),
            ...(key === undefined ? {} : { key }),
            allowRemote: change.allowRemote,
            ...(existing?.extra === undefined ? {} : { extra: existing.extra })
        };
        const checked = checkBackendEntry(entry);
        if (!checked.ok) {
            throw new BackendSettingError(`The backend "${change.name}" was not saved: ${checked.reason}.${screenRemedies[checked.field]}`);
        }
        if (existing === undefined && current.length >= maxStoredBackends) {
            throw new BackendSettingError(
                `The backend "${change.name}" was not saved: the settings hold ${current.length} backends, the most they keep (${maxStoredBackends}). Remove one first.`
            );
        }
        const next = Object.freeze(
            existing === undefined ? [...current, entry] : current.map((stored) => (stored === existing ? entry : stored))
        );
        // Planned on the configurations before anything changes; a name twice would be a bug here.
        const configs = configsOf(next);
        this.parts.backends.plan(configs);
        await this.parts.file.update((settings) => ({ ...settings, backends: next }));
        const plan = this.parts.backends.replace(configs);
        this.parts.log(
            `Settings: backend "${change.name}" ${existing === undefined ? "added" : "changed"}: ${backendSummary(checked.config)}.`
        );
        if (checked.config.remote) {
            this.parts.log(remoteBackendWarning(checked.config));
        }
        return plan;
    }

    /**
     * Takes the backend out of force first (its workspaces' next turns fail with backend_not_found;
     * a turn running on it finishes), then out of settings.json: a removed backend gets nothing more,
     * even when the file cannot be written.
     */
    async remove(name: string): Promise<BackendsPlan> {
        this.#refuseFromCommandLine(`remove the backend "${name}"`);
        const current = this.parts.file.current.backends;
        if (!current.some((entry) => entry.name === name)) {
            throw new BackendSettingError(
                `There is no backend "${name.slice(0, 80)}" in the settings (${current.length === 0 ? "they have none" : `they have ${current.map((entry) => `"${entry.name}"`).join(", ")}`}).`
            );
        }
        const next = Object.freeze(current.filter((entry) => entry.name !== name));
        const plan = this.parts.backends.replace(configsOf(next));
        await this.parts.file.update((settings) => ({ ...settings, backends: next }));
        this.parts.log(`Settings: backend "${name}" removed; workspaces on it now fail their turns saying so.`);
        return plan;
    }

    #refuseFromCommandLine(what: string): void {
        if (this.fromCommandLine) {
            throw new SettingFromCommandLineError(
                `The remote backends are given on the command line (--backend) for this run; restart the server without --backend to ${what} here.`
            );
        }
    }
}

/** What to change on the settings screen, for each part checkBackendEntry may refuse. */
const screenRemedies: Readonly<Record<BackendEntryField, string>> = {
    name: "",
    url: " Give the server's base URL, e.g. http://127.0.0.1:8000/v1.",
    model: " Give the backend's own model id, or leave it empty for all its models.",
    key: " Paste the key as the server expects it.",
    allowRemote: ' Tick "Allow beyond this machine" if that is what you want.'
};

/** The stored entries as configurations; each was checked when it was read or saved. */
function configsOf(entries: readonly StoredBackend[]): BackendConfig[] {
    return entries.map((entry) => {
        const checked = checkBackendEntry(entry);
        invariant(
            checked.ok,
            `the stored backend "${entry.name}" breaks the rules it was checked with: ${checked.ok ? "" : checked.reason}`
        );
        return checked.config;
    });
}
