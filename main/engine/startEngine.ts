// No electron import: the caller passes the spawner (utilityProcessSpawner in the app) and the
// userData paths, so this reads and is tested like the headless host's startup.
import path from "node:path";
import { DEMO_MODEL } from "../../contract/models.js";
import { engineDefaults, type EngineConfigInput } from "../../engine/index.js";
import type { EngineHealth } from "../../host/http/KvaultHttpServer.js";
import type { ModelFacts } from "../../contract/models.js";
import type { ModelInspector } from "../../host/models/inspectModelInChild.js";
import { defaultPoolPages } from "../../host/settings/KvaultSettings.js";
import { cachedModelInspector } from "../../host/models/modelFactsCache.js";
import type { EngineProcessSpawner } from "../../host/supervisor/EngineProcessSpawner.js";
import { EngineSupervisor } from "../../host/supervisor/EngineSupervisor.js";
import { EngineStartError } from "../../host/supervisor/engineHostErrors.js";
import type { BindingTestLog, BindingTestRecord } from "./BindingTestRelay.js";
import { NoUsableBinaryError, explainStartFailure } from "./NoUsableBinaryError.js";
import { appModelId, inspectAppModel, resolveAppModel } from "./resolveAppModel.js";
import { modelMethods, type HostModels } from "../../host/supervisor/modelMethods.js";

/** From app quit to killing an engine that has not exited: quitting should not hang. */
export const SHUTDOWN_GRACE_MS = 3_000;

export interface StartEngineOptions {
    /** Where the built-in demo model is generated and downloads go: `<userData>/models`. */
    readonly modelsDirectory: string;
    /** The model library's file: `<userData>/models.json`. */
    readonly libraryFile: string;
    /** From the settings; null for the demo model. */
    readonly modelPath: string | null;
    readonly spawner: EngineProcessSpawner;
    /** Reads model files in a process of their own (utilityInspectionSpawner): at start, on a switch, after a download. */
    readonly inspectModel: ModelInspector;
    readonly log: (line: string) => void;
    /** The binding tests main relays for engine processes (the BindingTestRelay), to say which backends failed. */
    readonly binaryTests?: BindingTestLog;
    /** The engine settings of settings.json (host/settings/engineConfigFor.ts), over engineDefaults. */
    readonly engine?: Omit<EngineConfigInput, "modelPath">;
}

export interface StartedEngine {
    readonly supervisor: EngineSupervisor;
    /** The model manager's RPC methods, over this supervisor. */
    readonly models: HostModels;
    /** What `/v1/models` lists for the model loaded now: it follows a model switch. */
    modelId(): string;
    /** A model file's facts for `/v1/models`, from the inspections this engine's start and switches made (one per file). */
    modelFacts(modelPath: string): Promise<ModelFacts>;
    /** The supervisor's state for `/health`, with why once it gave up restarting the engine. */
    health(): EngineHealth;
    /** Set when the model the settings name could not be loaded and the demo model runs instead. */
    readonly fallback?: { readonly modelPath: string; readonly reason: string };
    /** Set when the draft model the settings name cannot serve (unreadable, another tokenizer) and speculative decoding is off for this run. */
    readonly draftFallback?: { readonly draftModel: string; readonly reason: string };
}

/**
 * Chooses the model and starts the supervised engine process; resolves once it is ready. A model
 * from the settings that cannot be loaded (moved, deleted, damaged) does not leave the app without
 * an engine: the demo model starts instead, and `fallback` says why, while the settings keep the
 * path for the next start. A draft model that cannot serve (unreadable, or another tokenizer)
 * leaves the model as it is and speculative decoding off for this run, `draftFallback` saying why.
 * No usable llama.cpp binary is NoUsableBinaryError, with no fallback.
 */
export async function startEngine(given: StartEngineOptions): Promise<StartedEngine> {
    // One cache of model facts for the start's check, the switch's, the model panel and the local API.
    const options: StartEngineOptions = { ...given, inspectModel: cachedModelInspector(given.inspectModel) };
    const draftModel = options.engine?.speculation === "draft-model" ? options.engine.draftModelPath : undefined;
    if (draftModel === undefined) {
        return startOnModel(options);
    }
    try {
        // A draft model from the settings is untrusted input too: read in a child process before an engine sees it.
        await options.inspectModel(draftModel, {
            contextSize: options.engine?.window ?? engineDefaults.window,
            sequences: options.engine?.numDecodeSequences ?? engineDefaults.numDecodeSequences
        });
    } catch (error) {
        return startWithoutDraft(options, draftModel, error);
    }
    try {
        return await startOnModel(options);
    } catch (error) {
        if (!isDraftModelRefusal(error)) {
            throw error;
        }
        return startWithoutDraft(options, draftModel, error);
    }
}

/** The engine refused the draft model (engine/runtime/DraftModelError: another tokenizer, or a file it could not load). */
function isDraftModelRefusal(error: unknown): boolean {
    return error instanceof EngineStartError && error.reason?.code === "draft_model_unfit";
}

/** The settings' model without speculative decoding, saying why the draft model cannot serve: the app keeps its model. */
async function startWithoutDraft(options: StartEngineOptions, draftModel: string, error: unknown): Promise<StartedEngine> {
    const reason = error instanceof Error ? error.message : String(error);
    options.log(`The draft model ${draftModel} cannot serve (${reason}); speculative decoding is off for this run.`);
    const engine = { ...options.engine, speculation: undefined, draftModelPath: undefined };
    return { ...(await startOnModel({ ...options, engine })), draftFallback: { draftModel, reason } };
}

async function startOnModel(options: StartEngineOptions): Promise<StartedEngine> {
    if (options.modelPath === null) {
        return startOn(null, options);
    }
    try {
        return await startOn(options.modelPath, options);
    } catch (error) {
        if (error instanceof NoUsableBinaryError || isDraftModelRefusal(error)) {
            throw error;
        }
        const reason = (error as Error).message;
        options.log(`The model ${options.modelPath} could not be loaded (${reason}); starting the built-in demo model instead.`);
        return { ...(await startOn(null, options)), fallback: { modelPath: options.modelPath, reason } };
    }
}

async function startOn(modelPath: string | null, options: StartEngineOptions): Promise<StartedEngine> {
    const { log, modelsDirectory } = options;
    const model = resolveAppModel(modelsDirectory, modelPath, log);
    const { mode, window, prefillContextSize, decodeContextSize, numDecodeSequences, pageTokens } = engineDefaults;
    const config: EngineConfigInput = {
        modelPath: model.path,
        mode,
        window,
        prefillContextSize,
        decodeContextSize,
        numDecodeSequences,
        pageTokens,
        // A full window for every decode sequence, plus one for the prefill handoff, as the settings leave it.
        numPages: defaultPoolPages({ contextSize: window, pageTokens, decodeSequences: numDecodeSequences }),
        onWindowAboveCapacity: "clamp",
        ...options.engine
    };
    // A model from the settings is untrusted input: read in a child process before an engine sees it.
    await inspectAppModel(modelPath, options.inspectModel, {
        contextSize: config.window ?? window,
        sequences: config.numDecodeSequences ?? numDecodeSequences
    });
    const numTestsBefore = options.binaryTests?.numTests ?? 0;
    const supervisor = await EngineSupervisor.start(config, {
        spawner: options.spawner,
        inspectModel: options.inspectModel,
        shutdownGraceMs: SHUTDOWN_GRACE_MS,
        log
    }).catch((error: unknown) => {
        // A start that found no binary says which backends were tried and what to do, not "check the model".
        throw explainStartFailure(error, testsSince(options.binaryTests, numTestsBefore));
    });
    const { info } = supervisor;
    log(`Engine: ${info.modelName} on ${info.backend}, ${info.mode.effective} mode${info.mode.reason ? ` (${info.mode.reason})` : ""}.`);
    supervisor.on("crashed", (event) =>
        log(
            `The engine process stopped (${event.signal ?? `exit ${event.exitCode}`}); ${event.numInterrupted} request(s) ended with an error.${event.willRestart ? " Restarting it." : ""}`
        )
    );
    supervisor.on("down", (event) => log(event.error.message));
    supervisor.on("switched", (event) =>
        log(
            event.cause === "settings"
                ? `Engine: restarted with new settings; ${event.numEnded} request(s) ended with engine_settings_changed.`
                : `Engine: switched to ${event.info.modelName}; ${event.numEnded} request(s) ended with model_switched.`
        )
    );
    // "tiny" is the built-in demo model, generated into the models directory as at start.
    const resolveModel = (name: string): string =>
        name === DEMO_MODEL ? resolveAppModel(modelsDirectory, null, log).path : path.resolve(name);
    return {
        supervisor,
        models: modelMethods(supervisor, resolveModel, modelsDirectory, { libraryFile: options.libraryFile }),
        modelId: () => appModelId(supervisor.info.modelPath, modelsDirectory),
        health: () => supervisor.health(),
        // the engine's window and sequences now, which the settings screen may have changed since the start
        modelFacts: (modelPath) =>
            options.inspectModel(modelPath, { contextSize: supervisor.info.window.limit, sequences: supervisor.info.numDecodeSequences })
    };
}

/** The tests relayed after the `before`-th (the log keeps only its latest). */
function testsSince(log: BindingTestLog | undefined, before: number): readonly BindingTestRecord[] {
    const numNew = (log?.numTests ?? 0) - before;
    return log === undefined || numNew <= 0 ? [] : log.tests.slice(-numNew);
}
