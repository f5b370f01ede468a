import type {
    AppliedEngineSettings,
    AppSettingsView,
    CreatedApiKey,
    EngineSettingName,
    EngineSettings,
    EngineSettingsPlan,
    LocalApiChange,
    LocalApiView
} from "../../contract/settings.js";
import type { EngineInfo } from "../../contract/engineProtocol.js";
import type { ModelFacts } from "../../contract/models.js";
import type { EngineConfigInput } from "../../engine/index.js";
import type { BackendConfig } from "../backends/BackendConfig.js";
import { Backends } from "../backends/Backends.js";
import { apiNamespacePrefix, ApiKeys, newApiKeyGeneration } from "../http/ApiKeys.js";
import { BackendSettings, type BackendChange } from "./BackendSettings.js";
import type { EngineSupervisor } from "../supervisor/EngineSupervisor.js";
import { engineConfigFor } from "./engineConfigFor.js";
import { newApiKey, type KvaultSettings } from "./KvaultSettings.js";
import type { EngineMemoryInput, MachineMemory } from "./planEngineMemory.js";
import { planEngineMemory } from "./planEngineMemory.js";
import { MAX_STORED_API_KEYS } from "./parseSettingsFile.js";
import {
    ApiKeyLimitError,
    ApiKeyNotRevocableError,
    EngineSettingsChangedError,
    EngineSettingsRefusedError,
    SettingFromCommandLineError,
    SettingsUnavailableError
} from "./settingsErrors.js";
import type { SettingsFile } from "./SettingsFile.js";

/** What the settings need of the engine: its model and mode, its facts, its running turns, and a restart with other settings. */
export type SettingsEngine = Pick<EngineSupervisor, "info" | "inspectModel" | "reconfigure" | "numTurns" | "call">;

export interface SettingsHostParts {
    readonly host: AppSettingsView["host"];
    readonly file: SettingsFile;
    /** The state (data) directory: the desktop app's userData, the headless server's --data-dir. */
    readonly stateDirectory: string;
    /** The engine, once it is ready. */
    readonly engine: () => Promise<SettingsEngine>;
    /** What the engine was started with: the file's settings, with the command line's on top. */
    readonly running: EngineSettings;
    /** Settings given on the command line for this run, each with its flag; they cannot be changed here. */
    readonly fromCommandLine?: Readonly<Partial<Record<EngineSettingName, string>>>;
    /** The live key set the API serves (host/http/ApiKeys.ts): the file's keys are added at start, and created and revoked here. */
    readonly apiKeys: ApiKeys;
    /** Ids of keys given on the command line (--extra-api-key): in force for this run, not revocable here. */
    readonly commandLineKeyIds?: readonly string[];
    /** The live set of remote backends the host routes through (host/backends/Backends.ts): settings.json's are put in it at start and on each change. */
    readonly backends?: Backends;
    /** `--backend`'s for this run: in force instead of settings.json's, not changeable here. */
    readonly commandLineBackends?: readonly BackendConfig[];
    /** The local API as this host shows it (the desktop app's switch, or the headless server itself). */
    readonly localApi: (settings: KvaultSettings) => LocalApiView;
    /** The desktop app's local API switch (main/settings/SettingsService.ts); the headless server's API is itself: none. */
    readonly switchLocalApi?: (change: LocalApiChange) => Promise<void>;
    /** This machine's free memory now (host/settings/machineMemory.ts); injected so the plan can be tested. */
    readonly machine: () => MachineMemory;
    /** Engine settings to the engine's configuration; by default engineConfigFor. */
    readonly configFor?: (settings: EngineSettings) => Partial<Omit<EngineConfigInput, "modelPath">>;
    readonly makeApiKey?: () => string;
    /** The engines of the local models loaded beside the host's own (host/supervisor/EnginePool.ts): a revoked key's workspaces are forgotten there too. */
    readonly localEngines?: () => Promise<readonly Pick<SettingsEngine, "call">[]>;
    readonly log: (line: string) => void;
}

/** How often a revoke looks again for its key's workspaces, each time forgetting those it finds. */
const MAX_FORGET_ROUNDS = 3;

/** What planEngineSettings and applyEngineSettings take: the settings to change, the others as they run. */
export type EngineSettingsChange = Readonly<Partial<EngineSettings>>;

/**
 * The settings screen's side in the host, the same for both hosts: the view, the engine settings
 * planned (memory, what restarts) and then applied with a restart of the engine, and the API keys
 * created and revoked live, and the remote backends added, changed and removed live
 * (BackendSettings). Changes run one at a time, in call order; each is saved in
 * settings.json before it answers.
 */
export class SettingsHost {
    #running: EngineSettings;
    #queue: Promise<unknown> = Promise.resolve();
    /** The facts of the model loaded (the plan's KV bytes per token), read once per model file. */
    readonly #facts = new Map<string, Promise<ModelFacts>>();
    readonly #backends: BackendSettings;

    constructor(private readonly parts: SettingsHostParts) {
        this.#running = parts.running;
        this.#backends = new BackendSettings({
            file: parts.file,
            backends: parts.backends ?? new Backends([]),
            fromCommandLine: parts.commandLineBackends,
            log: parts.log
        });
        for (const { id, key, generation } of parts.file.current.apiKeys) {
            if (parts.apiKeys.has(id)) {
                parts.log(
                    `Settings: the API key "${id}" of settings.json is also given on the command line; the command line's is in force.`
                );
                continue;
            }
            parts.apiKeys.add({ id, key, generation });
        }
    }

    view(): AppSettingsView {
        const { file, commandLineKeyIds = [] } = this.parts;
        const settings = file.current;
        const stored = settings.apiKeys.filter(({ id }) => !commandLineKeyIds.includes(id));
        return {
            host: this.parts.host,
            localApi: this.parts.localApi(settings),
            modelPath: settings.modelPath,
            stateDirectory: this.parts.stateDirectory,
            settingsFile: file.filePath,
            engine: settings.engine,
            running: this.#running,
            fromCommandLine: this.parts.fromCommandLine ?? {},
            apiKeys: [
                ...stored.map(({ id, createdAt }) => ({ id, createdAt, source: "settings" as const })),
                ...commandLineKeyIds.map((id) => ({ id, createdAt: null, source: "command line" as const }))
            ],
            backends: this.#backends.view(),
            problems: file.problems
        };
    }

    /** Switches the desktop app's local API (saved once it holds); the headless server answers settings_unavailable. */
    async setLocalApi(change: LocalApiChange): Promise<AppSettingsView> {
        if (this.parts.switchLocalApi === undefined) {
            throw new SettingsUnavailableError(
                "This Kvault runs headless (npm run serve): its API is this server itself, on the address and port of its options. Restart it with other options (npm run serve -- --help) to change them."
            );
        }
        await this.parts.switchLocalApi(change);
        return this.view();
    }

    /** What applying `change` would take and restart; changes nothing. */
    planEngineSettings(change: EngineSettingsChange): Promise<EngineSettingsPlan> {
        return this.#plan(change);
    }

    /**
     * Plans `change` again, refuses it when it does not fit (engine_settings_refused, with the
     * plan's reasons), restarts the engine with it (running turns end with
     * engine_settings_changed), then saves it. An engine that does not start with it is started
     * again with the settings it had, nothing is saved, and the start's error is thrown.
     */
    applyEngineSettings(change: EngineSettingsChange): Promise<AppliedEngineSettings> {
        return this.#serialized(async () => {
            const plan = await this.#plan(change);
            if (!plan.fits) {
                throw new EngineSettingsRefusedError(`These engine settings were not applied. ${plan.problems.join(" ")}`);
            }
            const engine = await this.parts.engine();
            let info: EngineInfo = engine.info;
            if (plan.changed.length > 0) {
                const summary = plan.changed
                    .map((name) => `${name} ${String(this.#running[name])} → ${String(plan.settings[name])}`)
                    .join(", ");
                const configFor = this.parts.configFor ?? engineConfigFor;
                info = await engine.reconfigure(configFor(plan.settings), {
                    reason: `The engine restarts with new settings (${summary}).`,
                    endWith: (what) => new EngineSettingsChangedError(what, summary)
                });
                this.#running = plan.settings;
                this.parts.log(`Settings: the engine restarted with ${summary}.`);
            }
            const saved = Object.fromEntries(
                (Object.keys(change) as EngineSettingName[])
                    .filter((name) => !this.#isFromCommandLine(name))
                    .map((name) => [name, plan.settings[name]])
            );
            await this.parts.file.update((current) => ({ ...current, engine: Object.freeze({ ...current.engine, ...saved }) }));
            return { plan, info, view: this.view() };
        });
    }

    /**
     * A new key with its own workspace namespace (a new generation: never an earlier key's of the
     * same id): in force at once, kept in settings.json; its secret is in this answer only. Past
     * MAX_STORED_API_KEYS it is refused (api_key_limit_reached), as the next start would drop it.
     */
    createApiKey(id: string): Promise<CreatedApiKey> {
        return this.#serialized(async () => {
            const numStored = this.parts.file.current.apiKeys.length;
            if (numStored >= MAX_STORED_API_KEYS) {
                throw new ApiKeyLimitError(
                    `The settings hold ${numStored} API keys, the most Kvault keeps (${MAX_STORED_API_KEYS}); "${id}" was not created. Revoke a key you no longer use, then create it.`
                );
            }
            const key = (this.parts.makeApiKey ?? newApiKey)();
            const generation = newApiKeyGeneration();
            // ApiKeys checks the id and refuses one in use (invalid_api_key_entry); a probe set keeps the live one untouched until saved.
            new ApiKeys(this.parts.file.current.apiKeys.filter((entry) => this.parts.apiKeys.has(entry.id))).add({ id, key });
            if (this.parts.apiKeys.has(id)) {
                this.parts.apiKeys.add({ id, key }); // throws: the id is taken (by a command-line key)
            }
            const createdAt = new Date().toISOString();
            await this.parts.file.update((current) => ({
                ...current,
                apiKeys: Object.freeze([...current.apiKeys, Object.freeze({ id, key, createdAt, generation })])
            }));
            this.parts.apiKeys.add({ id, key, generation });
            this.parts.log(`Settings: API key "${id}" created; its clients get workspaces of their own (api@${id}~${generation}:…).`);
            return { id, key, view: this.view() };
        });
    }

    /**
     * Revokes a key created here: its next request is a 401 and its open streams close, then
     * settings.json forgets it, then the engine forgets its workspaces (their KV scrubbed). A key
     * created later by the same id has another generation, so another namespace, whatever is left.
     */
    revokeApiKey(id: string): Promise<AppSettingsView> {
        return this.#serialized(async () => {
            if ((this.parts.commandLineKeyIds ?? []).includes(id)) {
                throw new ApiKeyNotRevocableError(
                    `The API key "${id}" comes from --extra-api-key for this run; restart the server without it to revoke it.`
                );
            }
            if (!this.parts.file.current.apiKeys.some((entry) => entry.id === id)) {
                throw new ApiKeyNotRevocableError(
                    `There is no API key "${id}" in the settings; the keys are listed on the settings screen.`
                );
            }
            const namespace = this.parts.apiKeys.namespaceOf(id);
            this.parts.apiKeys.revoke(id); // first: a key being revoked must not open anything more, even if the file cannot be written
            await this.parts.file.update((current) => ({
                ...current,
                apiKeys: Object.freeze(current.apiKeys.filter((entry) => entry.id !== id))
            }));
            const numForgotten = namespace === undefined ? 0 : await this.#forgetNamespace(namespace);
            this.parts.log(`Settings: API key "${id}" revoked; ${numForgotten} workspace(s) of it forgotten.`);
            return this.view();
        });
    }

    /**
     * Forgets every engine workspace of a revoked key's namespace, until the engine lists none (a
     * turn of the key sent just before the revoke may make one after the first look); returns how
     * many. A failure is logged, not thrown: the key is revoked and no key reaches the namespace.
     */
    async #forgetNamespace(namespace: string): Promise<number> {
        const prefix = apiNamespacePrefix(namespace);
        let numForgotten = 0;
        try {
            // the key's requests may have named any loaded model: each engine holds its own workspaces
            const engines = [await this.parts.engine(), ...((await this.parts.localEngines?.()) ?? [])];
            for (const engine of engines) {
                for (let round = 0; round < MAX_FORGET_ROUNDS; round++) {
                    const snapshot = await engine.call("snapshot", {});
                    const left = snapshot.workspaces.map(({ workspace }) => workspace).filter((name) => name.startsWith(prefix));
                    if (left.length === 0) {
                        break;
                    }
                    for (const workspace of left) {
                        await engine.call("forgetWorkspace", { workspace });
                        numForgotten++;
                    }
                }
            }
        } catch (error) {
            this.parts.log(
                `Settings: the workspaces of the revoked key's namespace ${namespace} could not all be forgotten (${(error as Error).message}); no key reaches them, and the engine's next start drops them.`
            );
        }
        return numForgotten;
    }

    /** Adds a remote backend, or puts a new one in place of the one of that name: checked, saved, then in force (BackendSettings.set). */
    setBackend(change: BackendChange): Promise<AppSettingsView> {
        return this.#serialized(async () => {
            await this.#backends.set(change);
            return this.view();
        });
    }

    /** Takes a remote backend of the settings out of force, then out of settings.json (BackendSettings.remove). */
    removeBackend(name: string): Promise<AppSettingsView> {
        return this.#serialized(async () => {
            await this.#backends.remove(name);
            return this.view();
        });
    }

    async #plan(change: EngineSettingsChange): Promise<EngineSettingsPlan> {
        for (const name of Object.keys(change) as EngineSettingName[]) {
            if (this.#isFromCommandLine(name) && change[name] !== this.#running[name]) {
                throw new SettingFromCommandLineError(
                    `${name} is given on the command line for this run (${this.parts.fromCommandLine![name]}); restart the server without ${this.parts.fromCommandLine![name]} to change it here.`
                );
            }
        }
        const engine = await this.parts.engine();
        const { info } = engine;
        const settings = Object.freeze({ ...this.#running, ...change });
        let draft: EngineMemoryInput["draft"];
        if (settings.speculation === "draft-model" && settings.draftModel !== null) {
            // the draft is a model file like any other: inspected in a child process, a crafted one refused with why
            draft = await this.#factsOf(engine, settings.draftModel).then(
                (facts) => ({ facts }),
                (error: unknown) => ({
                    problem: `The draft model ${settings.draftModel} cannot be used: ${error instanceof Error ? error.message : String(error)}`
                })
            );
        } else if (settings.speculation === "draft-model") {
            draft = { problem: "Speculative decoding is Draft model, but no draft model is chosen; give its full path." };
        }
        return planEngineMemory({
            settings,
            running: this.#running,
            facts: await this.#factsOf(engine, info.modelPath),
            draft,
            machine: withDeviceMemory(this.parts.machine(), info),
            mode: info.mode.effective,
            gpuBackend: info.compute.devices.some((device) => device.type === "gpu"),
            numRunningTurns: engine.numTurns
        });
    }

    /** A model file's facts, read once per file; a failed read is tried again next time. */
    #factsOf(engine: SettingsEngine, modelPath: string): Promise<ModelFacts> {
        let facts = this.#facts.get(modelPath);
        if (facts === undefined) {
            facts = engine.inspectModel(modelPath);
            this.#facts.set(modelPath, facts);
            facts.catch(() => this.#facts.delete(modelPath));
        }
        return facts;
    }

    #isFromCommandLine(name: EngineSettingName): boolean {
        return this.parts.fromCommandLine?.[name] !== undefined;
    }

    #serialized<T>(task: () => Promise<T>): Promise<T> {
        const run = this.#queue.then(task);
        this.#queue = run.catch(() => undefined);
        return run;
    }
}

/**
 * The machine's memory with the GPU's free memory the engine measured when it came up (its own
 * weights and KV counted as used, which the plan gives back), where the host knows none itself.
 */
function withDeviceMemory(machine: MachineMemory, info: EngineInfo): MachineMemory {
    const device = info.compute.deviceMemory;
    if (machine.freeVramBytes !== null || device === undefined) {
        return machine;
    }
    return { ...machine, freeVramBytes: Math.max(0, device.totalBytes - device.usedBytes) };
}
