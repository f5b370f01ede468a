import path from "node:path";
import { DEMO_MODEL, type ModelFacts } from "../../contract/models.js";
import type { EngineSupervisor } from "./EngineSupervisor.js";
import type { ModelDownloads } from "../models/downloadModel.js";
import { hasPartialRecords } from "../models/partialDownloads.js";
import type { EngineClient } from "./EngineClient.js";
import { ModelLibrary, type LibraryOrigin } from "../models/ModelLibrary.js";

/**
 * The host's client, plus what its shutdown calls: stop running downloads, keeping their partial
 * files to resume at the next start, and wait for the model library's writes.
 */
export interface SupervisedEngineClient extends EngineClient {
    stopDownloads(): Promise<void>;
}

export interface HostModelsOptions {
    /** The model library's file: `<dataDir>/models.json`, or userData's. */
    readonly libraryFile: string;
    /** ModelDownloads' stallMs; its default when undefined. */
    readonly downloadStallMs?: number;
}

/**
 * The EngineClient every host-side consumer (the renderer's RPC, the local API) uses, over the
 * supervised engine process. `resolveModel` turns switchModel's argument ("tiny" or a path) into
 * the file to load. Downloads go into `modelsDirectory`; node-llama-cpp's downloader is loaded on
 * the first download, or at the first listing when a previous host left partial downloads, in this
 * (the host's) process. Every model loaded by path and every finished download goes into the model
 * library, whose facts come from the engine's inspectModel.
 */
export function supervisorEngineClient(
    supervisor: EngineSupervisor,
    resolveModel: (model: string) => string,
    modelsDirectory: string,
    models: HostModelsOptions
): SupervisedEngineClient {
    let library: Promise<ModelLibrary> | undefined;
    const getLibrary = (): Promise<ModelLibrary> =>
        (library ??= ModelLibrary.open({
            filePath: models.libraryFile,
            inspect: (modelPath) => supervisor.inspectModel(modelPath),
            isLoaded: (modelPath) => path.resolve(supervisor.info.modelPath) === modelPath
        }));
    // The library is a record of what was used: failing to update it never fails the load or the download.
    const remember = async (modelPath: string, origin: LibraryOrigin, facts?: ModelFacts): Promise<void> => {
        await (await getLibrary()).remember(modelPath, origin, facts).catch(() => undefined);
    };
    let downloads: Promise<ModelDownloads> | undefined;
    const getDownloads = (): Promise<ModelDownloads> =>
        (downloads ??= import("../models/downloadModel.js").then(
            ({ ModelDownloads }) =>
                new ModelDownloads({
                    modelsDirectory,
                    stallMs: models.downloadStallMs,
                    inspect: (modelPath) => supervisor.inspectModel(modelPath),
                    onDone: (download, facts) => remember(download.path, { kind: "downloaded", source: download.source }, facts)
                })
        ));
    return {
        info: () => supervisor.info,
        chat: (request, callbacks, signal) => supervisor.chat(request, callbacks, signal),
        measure: (workspace, messages, draft) => supervisor.measure(workspace, messages, draft),
        snapshot: () => supervisor.snapshot(),
        forgetWorkspace: (workspace) => supervisor.forgetWorkspace(workspace),
        audit: () => supervisor.audit(),
        replayableTurns: () => supervisor.replayableTurns(),
        replay: (requestId) => supervisor.replay(requestId),
        listDrills: () => supervisor.listDrills(),
        runDrill: (id) => supervisor.runDrill(id),
        runCanary: (params) => supervisor.runCanary(params),
        inspectModel: (modelPath) => supervisor.inspectModel(modelPath),
        switchModel: async (model) => {
            const modelPath = resolveModel(model);
            const info = await supervisor.switchModel(modelPath);
            if (model !== DEMO_MODEL) {
                await remember(modelPath, { kind: "opened" });
            }
            return info;
        },
        startDownload: async (source) => (await getDownloads()).start(source),
        listDownloads: async () => (downloads === undefined && !hasPartialRecords(modelsDirectory) ? [] : (await getDownloads()).list()),
        cancelDownload: async (id) => (await getDownloads()).cancel(id),
        resumeDownload: async (id) => (await getDownloads()).resume(id),
        listModels: async () => (await getLibrary()).list(),
        forgetModel: async (id, deleteFile) => (await getLibrary()).forget(id, deleteFile),
        stopDownloads: async () => {
            await (await downloads)?.dispose();
            await (await library)?.flush();
        }
    };
}
