// The headless server's engine start, which createHost (host/createHost.ts) calls with the engine
// settings of this run: the model (--model, else the one loaded last), its checks, the supervised
// engine process and the model manager over it.
import fs from "node:fs";
import path from "node:path";
import type { EngineSettings } from "../../contract/settings.js";
import { DEMO_MODEL } from "../../contract/models.js";
import type { EngineConfigInput } from "../../engine/index.js";
import type { HostEngine } from "../createHost.js";
import type { ModelInspector } from "../models/inspectModelInChild.js";
import type { SettingsFile } from "../settings/SettingsFile.js";
import { EngineSupervisor } from "../supervisor/EngineSupervisor.js";
import { modelMethods } from "../supervisor/modelMethods.js";
import { inspectServeModel, resolveServeModel, serveModelId } from "./resolveServeModel.js";
import type { ServeOptions } from "./serveOptions.js";

export interface ServeEngineStart {
    /** The command line as parsed. */
    readonly given: ServeOptions;
    readonly settingsFile: SettingsFile;
    /** The file's engine settings with the command line's on top. */
    readonly engineSettings: EngineSettings;
    /** The host's one cache of model facts: a file is inspected once. */
    readonly inspectModel: ModelInspector;
    /** Engine settings to the engine's configuration, with the command line's mode and demo delays. */
    readonly configFor: (settings: EngineSettings) => Omit<EngineConfigInput, "modelPath">;
    readonly log: (line: string) => void;
    /** Called once the model and draft model passed their checks, before the engine process starts. */
    readonly beforeStart?: () => void;
}

/** Starts the engine for `npm run serve`; rejects with why (a model refused, no usable binary) and the server exits. */
export async function startServeEngine(start: ServeEngineStart): Promise<HostEngine> {
    const { given, settingsFile, engineSettings, inspectModel, log } = start;
    const savedModel = settingsFile.current.modelPath;
    const options: ServeOptions = {
        ...given,
        model: !given.modelGiven && savedModel !== null && fs.existsSync(savedModel) ? { kind: "file", path: savedModel } : given.model,
        kvType: engineSettings.kvCacheType,
        context: engineSettings.contextSize,
        decodeSequences: engineSettings.decodeSequences
    };
    const model = resolveServeModel(options, log);
    await inspectServeModel(options, model, inspectModel);
    if (
        engineSettings.speculation !== "draft-model" &&
        (given.engineFromCommandLine.draftMaxTokens !== undefined || given.engineFromCommandLine.draftMinConfidence !== undefined)
    ) {
        log(
            "--draft-max and --draft-p-min tune a draft model, and speculation is not by draft model this run (--draft-model PATH, or the settings' Draft model): they have no effect until it is."
        );
    }
    if (engineSettings.speculation === "draft-model" && engineSettings.draftModel !== null) {
        // a draft model is a model file like any other: a crafted one is refused here, not in the engine
        await inspectModel(engineSettings.draftModel, { contextSize: options.context, sequences: options.decodeSequences });
    }
    start.beforeStart?.();
    const supervisor = await EngineSupervisor.start({ modelPath: model.path, ...start.configFor(engineSettings) }, { log, inspectModel });
    logEngine(supervisor, log);
    supervisor.on("switched", (event) => {
        // The model loaded last is the one the next start loads, unless --model names one (null: the demo model).
        const modelPath = serveModelId(event.info.modelPath) === DEMO_MODEL ? null : event.info.modelPath;
        if (settingsFile.current.modelPath !== modelPath) {
            settingsFile.update((current) => ({ ...current, modelPath })).catch((error: unknown) => log((error as Error).message));
        }
    });
    // "tiny" is the built-in demo model, generated into the data directory as at start.
    const models = modelMethods(
        supervisor,
        (name) =>
            name === DEMO_MODEL
                ? resolveServeModel({ ...options, model: { kind: "preset", preset: DEMO_MODEL } }, log).path
                : path.resolve(name),
        // Downloads go next to the demo model; the model library is the data directory's models.json.
        path.join(options.dataDir, "models"),
        {
            libraryFile: path.join(options.dataDir, "models.json"),
            downloadStallMs: options.downloadStallSeconds === undefined ? undefined : options.downloadStallSeconds * 1000
        }
    );
    return { supervisor, models };
}

/** The engine's lines on stderr: what runs, a clamped window, and each switch, stop and restart after. */
function logEngine(supervisor: EngineSupervisor, log: (line: string) => void): void {
    const info = supervisor.info;
    log(`Engine: ${info.modelName} on ${info.backend}, ${info.mode.effective} mode${info.mode.reason ? ` (${info.mode.reason})` : ""}.`);
    if (info.window.clamped) {
        log(
            `The window was clamped from ${info.window.configured.toLocaleString("en-US")} to ${info.window.limit.toLocaleString("en-US")} tokens: the measured ${info.window.boundBy} capacity is smaller.`
        );
    }
    supervisor.on("switched", (event) =>
        log(
            event.cause === "settings"
                ? `Engine: restarted with new settings; ${event.numEnded} request(s) ended with engine_settings_changed.`
                : `Engine: switched to ${event.info.modelName}; ${event.numEnded} request(s) ended with model_switched.`
        )
    );
    supervisor.on("down", (event) => log(event.error.message));
    supervisor.on("crashed", (event) =>
        log(
            `The engine process stopped (${event.signal ?? `exit ${event.exitCode}`}); ${event.numInterrupted} requests ended with an error.${event.willRestart ? " Restarting it." : ""}`
        )
    );
}
