// Several local models at once: beside the server's own engine (its --model, which stays loaded as
// it always has), one supervised engine process per further model, started on the first request
// that names it, stopped after an idle time, within a memory budget planned before each load.
// Each engine keeps its own workspaces, pages, audits and canary, so isolation per model and per
// workspace is what one engine gives.
import type { EngineClient, EngineInfo } from "../../contract/engineProtocol.js";
import { checkUnchanged } from "../models/fileIdentity.js";
import type { DiskModel } from "../models/findModelsOnDisk.js";
import { ModelMemoryBudgetError, ModelNotFoundError } from "../models/modelErrors.js";
import { OWN_MODEL_SOURCE } from "../models/listLocalModels.js";
import { megabytes, type ModelLoadPlan } from "../models/planModelLoad.js";

/** An engine the pool can start and stop: EngineSupervisor. */
export interface PooledEngine extends EngineClient {
    readonly info: EngineInfo;
    dispose(): Promise<void>;
}

export const enginePoolDefaults = {
    /** A model no request used for this long is unloaded, as Ollama's keep_alive default. */
    idleMs: 5 * 60 * 1000
} as const;

export interface EnginePoolOptions {
    /** The server's own engine and its model's API id: listed as loaded, counted in the budget, never unloaded. */
    readonly primary: { readonly engine: PooledEngine; id(): string };
    /** The models Kvault may load besides it (found on disk, host/models/findModelsOnDisk.ts). */
    available(): Promise<readonly DiskModel[]>;
    /** The memory a model file will take under the running settings (host/models/planModelLoad.ts). */
    plan(modelPath: string): Promise<ModelLoadPlan>;
    /** The memory a running engine holds, from what it measured (planRunningModel); `plan` of its file when absent. */
    planRunning?(engine: PooledEngine): Promise<ModelLoadPlan>;
    /** Starts an engine on a model file (EngineSupervisor.start with the running settings). */
    start(modelPath: string): Promise<PooledEngine>;
    /** What every loaded model's plan together may take, in bytes; a function reads the settings in force at each load. */
    readonly budgetBytes: number | (() => number);
    /** How long a model no request uses stays loaded; a function reads the settings in force at each release. */
    readonly idleMs?: number | (() => number);
    readonly log: (line: string) => void;
    readonly now?: () => number;
}

/** A loaded model as Ollama's /api/ps and /metrics show it. */
export interface LoadedModel {
    readonly id: string;
    readonly path: string;
    /** Where it was found (DiskModel's source), or "own" for the server's own model. */
    readonly source: string;
    readonly engine: PooledEngine;
    readonly plannedBytes: number;
    /** Requests using it now. */
    readonly numActive: number;
    /** When it will be unloaded if no request comes (ms since the epoch); undefined while in use, or for the server's own model. */
    readonly expiresAt: number | undefined;
    readonly primary: boolean;
}

/** A model held for one request: its engine, released when the request ends. */
export interface ModelLease {
    readonly engine: PooledEngine;
    /** The models unloaded to make room for this one, by id; empty when none was. */
    readonly unloaded: readonly string[];
    release(): void;
}

interface Entry {
    readonly model: DiskModel;
    readonly engine: PooledEngine;
    readonly plannedBytes: number;
    numActive: number;
    lastUsedAt: number;
    idleTimer: ReturnType<typeof setTimeout> | undefined;
    expiresAt: number | undefined;
}

export class EnginePool {
    readonly #entries = new Map<string, Entry>();
    /** Loads in progress by id: a second request for the same model waits for the first's load. */
    readonly #loading = new Map<string, Promise<{ entry: Entry; unloaded: readonly string[] }>>();
    /** Loads run one after another, so that each plans against what is really loaded. */
    #loads: Promise<unknown> = Promise.resolve();
    /** The server's own model's plan, by its path (a model switch changes it). */
    #primaryBytes: { readonly path: string; readonly bytes: Promise<number> } | undefined;
    #disposed = false;
    readonly #now: () => number;

    constructor(private readonly options: EnginePoolOptions) {
        this.#now = options.now ?? Date.now;
    }

    /** The idle time in force now, ms. */
    get idleMs(): number {
        const idleMs = this.options.idleMs ?? enginePoolDefaults.idleMs;
        return typeof idleMs === "number" ? idleMs : idleMs();
    }

    /** The memory budget in force now, bytes. */
    get budgetBytes(): number {
        const { budgetBytes } = this.options;
        return typeof budgetBytes === "number" ? budgetBytes : budgetBytes();
    }

    /** Whether `id` names a model the pool serves besides the server's own (loaded or found on disk). */
    async has(id: string): Promise<boolean> {
        return id !== this.options.primary.id() && (this.#entries.has(id) || (await this.#find(id)) !== undefined);
    }

    /**
     * The engine of model `id`, loaded now if it is not (unloading the least recently used idle
     * models when the budget needs it); held until `release`. Rejects with model_not_found,
     * model_file_changed (the file is not the one inspected) or model_memory_budget (the numbers).
     */
    async acquire(id: string): Promise<ModelLease> {
        const loaded = this.#entries.get(id);
        if (loaded !== undefined) {
            return this.#lease(this.#checked(loaded), []);
        }
        let loading = this.#loading.get(id);
        if (loading === undefined) {
            // set before any await, so that a second request for the same model waits for this load
            loading = this.#findAndLoad(id);
            this.#loading.set(id, loading);
            void loading.then(
                () => this.#loading.delete(id),
                () => this.#loading.delete(id)
            );
        }
        const { entry, unloaded } = await loading;
        return this.#lease(entry, unloaded);
    }

    /** Every model found on disk, loaded or not. */
    available(): Promise<readonly DiskModel[]> {
        return this.options.available();
    }

    /** The server's own model, then each model the pool loaded, in load order. */
    async loaded(): Promise<LoadedModel[]> {
        const primary: LoadedModel = {
            id: this.options.primary.id(),
            path: this.options.primary.engine.info.modelPath,
            source: OWN_MODEL_SOURCE,
            engine: this.options.primary.engine,
            plannedBytes: await this.#primaryPlannedBytes(),
            numActive: 0,
            expiresAt: undefined,
            primary: true
        };
        return [
            primary,
            ...[...this.#entries.values()].map((entry) => ({
                id: entry.model.id,
                path: entry.model.path,
                source: entry.model.source,
                engine: entry.engine,
                plannedBytes: entry.plannedBytes,
                numActive: entry.numActive,
                expiresAt: entry.expiresAt,
                primary: false
            }))
        ];
    }

    /** Stops every engine the pool started; the server's own is its owner's to stop. */
    async dispose(): Promise<void> {
        this.#disposed = true;
        const entries = [...this.#entries.values()];
        this.#entries.clear();
        for (const entry of entries) {
            clearTimeout(entry.idleTimer);
        }
        await Promise.all(entries.map((entry) => entry.engine.dispose().catch(() => undefined)));
    }

    async #findAndLoad(id: string): Promise<{ entry: Entry; unloaded: readonly string[] }> {
        const model = await this.#find(id);
        if (model === undefined) {
            throw new ModelNotFoundError(`No model "${id.slice(0, 200)}" is loaded or found on this disk; GET /v1/models lists them.`);
        }
        return this.#serially(() => this.#load(model));
    }

    async #find(id: string): Promise<DiskModel | undefined> {
        return (await this.options.available()).find((model) => model.id === id && model.id !== this.options.primary.id());
    }

    /** A loaded entry whose file is still the one loaded; one that changed is unloaded and refused. */
    #checked(entry: Entry): Entry {
        try {
            checkUnchanged(entry.model.id, entry.model.path, entry.model.identity);
        } catch (error) {
            if (entry.numActive === 0) {
                this.#unload(entry, "its file changed");
            }
            throw error;
        }
        return entry;
    }

    #lease(entry: Entry, unloaded: readonly string[]): ModelLease {
        entry.numActive++;
        entry.lastUsedAt = this.#now();
        clearTimeout(entry.idleTimer);
        entry.idleTimer = undefined;
        entry.expiresAt = undefined;
        let released = false;
        return {
            engine: entry.engine,
            unloaded,
            release: () => {
                if (released) {
                    return;
                }
                released = true;
                entry.numActive--;
                entry.lastUsedAt = this.#now();
                if (entry.numActive === 0 && this.#entries.get(entry.model.id) === entry) {
                    const idleMs = this.idleMs;
                    entry.expiresAt = entry.lastUsedAt + idleMs;
                    entry.idleTimer = setTimeout(() => this.#unload(entry, `no request for ${Math.round(idleMs / 1000)} s`), idleMs);
                    entry.idleTimer.unref();
                }
            }
        };
    }

    #serially<T>(load: () => Promise<T>): Promise<T> {
        const next = this.#loads.catch(() => undefined).then(load);
        this.#loads = next;
        return next;
    }

    /** Plans the model, makes room by unloading idle models least recently used first, then starts its engine. */
    async #load(model: DiskModel): Promise<{ entry: Entry; unloaded: readonly string[] }> {
        checkUnchanged(model.id, model.path, model.identity);
        const plan = await this.options.plan(model.path);
        const budget = this.budgetBytes;
        const held = async (): Promise<number> =>
            (await this.#primaryPlannedBytes()) + [...this.#entries.values()].reduce((total, entry) => total + entry.plannedBytes, 0);
        const idle = [...this.#entries.values()].filter((entry) => entry.numActive === 0).sort((a, b) => a.lastUsedAt - b.lastUsedAt);
        const freeable = idle.reduce((total, entry) => total + entry.plannedBytes, 0);
        const heldNow = await held();
        if (heldNow - freeable + plan.totalBytes > budget) {
            throw new ModelMemoryBudgetError(await this.#budgetMessage(model, plan, heldNow, freeable));
        }
        const unloaded: string[] = [];
        for (const entry of idle) {
            if ((await held()) + plan.totalBytes <= budget) {
                break;
            }
            this.#unload(entry, `to make room for "${model.id}" (${megabytes(plan.totalBytes)}) within the ${megabytes(budget)} budget`);
            unloaded.push(entry.model.id);
        }
        this.options.log(`Loading "${model.id}" from ${model.path} (${megabytes(plan.totalBytes)} planned).`);
        const engine = await this.options.start(model.path);
        if (this.#disposed) {
            await engine.dispose();
            throw new ModelNotFoundError(`The server is stopping; "${model.id}" was not loaded.`);
        }
        const entry: Entry = {
            model,
            engine,
            plannedBytes: plan.totalBytes,
            numActive: 0,
            lastUsedAt: this.#now(),
            idleTimer: undefined,
            expiresAt: undefined
        };
        this.#entries.set(model.id, entry);
        return { entry, unloaded };
    }

    async #budgetMessage(model: DiskModel, plan: ModelLoadPlan, heldBytes: number, freeableBytes: number): Promise<string> {
        const parts = plan.lines.map((line) => `${line.label}: ${megabytes(line.bytes)}`).join("; ");
        const busy = [...this.#entries.values()]
            .filter((entry) => entry.numActive > 0)
            .map((entry) => `"${entry.model.id}" ${megabytes(entry.plannedBytes)} (${entry.numActive} request(s) running)`);
        const holders = [`"${this.options.primary.id()}" ${megabytes(await this.#primaryPlannedBytes())} (the server's model)`, ...busy];
        return (
            `Loading "${model.id}" needs ${megabytes(plan.totalBytes)} (${parts}); the model memory budget is ${megabytes(this.budgetBytes)}, ` +
            `and ${megabytes(heldBytes - freeableBytes)} of it is held by models that cannot be unloaded now: ${holders.join(", ")}` +
            `${freeableBytes > 0 ? `, even after unloading the idle ones (${megabytes(freeableBytes)})` : ""}. ` +
            `Wait for running requests to end, raise the budget (Settings › Local models, or --models-memory-mb), or use a smaller model.`
        );
    }

    #unload(entry: Entry, why: string): void {
        if (this.#entries.get(entry.model.id) !== entry) {
            return;
        }
        this.#entries.delete(entry.model.id);
        clearTimeout(entry.idleTimer);
        this.options.log(`Unloaded "${entry.model.id}" (${megabytes(entry.plannedBytes)}): ${why}.`);
        entry.engine
            .dispose()
            .catch((error: unknown) => this.options.log(`Stopping "${entry.model.id}" failed: ${(error as Error).message}`));
    }

    /** The server's own model's plan, computed once per model file it runs. */
    #primaryPlannedBytes(): Promise<number> {
        const modelPath = this.options.primary.engine.info.modelPath;
        if (this.#primaryBytes?.path !== modelPath) {
            const plan = this.options.planRunning?.(this.options.primary.engine) ?? this.options.plan(modelPath);
            const bytes = plan.then(
                (plan) => plan.totalBytes,
                () => 0
            );
            this.#primaryBytes = { path: modelPath, bytes };
        }
        return this.#primaryBytes.bytes;
    }
}
