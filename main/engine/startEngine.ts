// No electron import: the caller passes the spawner (utilityProcessSpawner in the app) and the
// userData paths, so this reads and could be tested like the headless host's startup.
import path from "node:path";
import { DEMO_MODEL } from "../../contract/models.js";
import type { EngineConfigInput } from "../../engine/index.js";
import type { EngineProcessSpawner } from "../../host/supervisor/EngineProcessSpawner.js";
import { EngineSupervisor } from "../../host/supervisor/EngineSupervisor.js";
import { resolveAppModel } from "./resolveAppModel.js";
import { modelMethods, type HostModels } from "../../host/supervisor/modelMethods.js";

/** The app's engine configuration; defaults in one place (STYLE.md 13), as the headless server's. */
export const appEngineDefaults = {
    mode: "split",
    window: 4096,
    numDecodeSequences: 4,
    pageTokens: 256,
    /** From app quit to killing an engine that has not exited: quitting should not hang. */
    shutdownGraceMs: 3_000
} as const;

export interface StartEngineOptions {
    /** Where the built-in demo model is generated and downloads go: `<userData>/models`. */
    readonly modelsDirectory: string;
    /** The model library's file: `<userData>/models.json`. */
    readonly libraryFile: string;
    /** From the settings; null for the demo model. */
    readonly modelPath: string | null;
    readonly spawner: EngineProcessSpawner;
    readonly log: (line: string) => void;
}

export interface StartedEngine {
    readonly supervisor: EngineSupervisor;
    /** The model manager's RPC methods, over this supervisor. */
    readonly models: HostModels;
    readonly modelId: string;
}

/** Chooses the model and starts the supervised engine process; resolves once it is ready. */
export async function startEngine(options: StartEngineOptions): Promise<StartedEngine> {
    const { log } = options;
    const model = resolveAppModel(options.modelsDirectory, options.modelPath, log);
    const { window, numDecodeSequences, pageTokens } = appEngineDefaults;
    const config: EngineConfigInput = {
        modelPath: model.path,
        mode: appEngineDefaults.mode,
        window,
        prefillContextSize: window,
        decodeContextSize: window,
        numDecodeSequences,
        pageTokens,
        // A full window for every decode sequence, plus one for the prefill handoff.
        numPages: Math.ceil(window / pageTokens) * (numDecodeSequences + 1),
        onWindowAboveCapacity: "clamp"
    };
    const supervisor = await EngineSupervisor.start(config, {
        spawner: options.spawner,
        shutdownGraceMs: appEngineDefaults.shutdownGraceMs,
        log
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
        log(`Engine: switched to ${event.info.modelName}; ${event.numEnded} request(s) ended with model_switched.`)
    );
    // "tiny" is the built-in demo model, generated into the models directory as at start.
    const resolveModel = (name: string): string =>
        name === DEMO_MODEL ? resolveAppModel(options.modelsDirectory, null, log).path : path.resolve(name);
    return {
        supervisor,
        models: modelMethods(supervisor, resolveModel, options.modelsDirectory, { libraryFile: options.libraryFile }),
        modelId: model.id
    };
}
