import type { EngineSupervisor } from "../engine/host/EngineSupervisor.js";
import type { ModelDownloads } from "../engine/runtime/downloadModel.js";
import type { EngineClient } from "./EngineClient.js";

/** The host's client, plus what its shutdown calls: cancel running downloads, deleting their partial files. */
export interface SupervisedEngineClient extends EngineClient {
    stopDownloads(): Promise<void>;
}

/**
 * The EngineClient every host-side consumer (the renderer's RPC, the local API) uses, over the
 * supervised engine process. `resolveModel` turns switchModel's argument ("tiny" or a path) into
 * the file to load. Downloads go into `modelsDirectory`; node-llama-cpp's downloader is loaded on
 * the first download, in this (the host's) process.
 */
export function supervisorEngineClient(supervisor: EngineSupervisor, resolveModel: (model: string) => string, modelsDirectory: string): SupervisedEngineClient {
    let downloads: Promise<ModelDownloads> | undefined;
    const getDownloads = (): Promise<ModelDownloads> =>
        downloads ??= import("../engine/runtime/downloadModel.js").then(({ ModelDownloads }) => new ModelDownloads({ modelsDirectory }));
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
        inspectModel: (modelPath) => supervisor.inspectModel(modelPath),
        switchModel: async (model) => supervisor.switchModel(resolveModel(model)),
        startDownload: async (source) => (await getDownloads()).start(source),
        listDownloads: async () => downloads === undefined ? [] : (await downloads).list(),
        cancelDownload: async (id) => (await getDownloads()).cancel(id),
        stopDownloads: async () => (await downloads)?.dispose()
    };
}
