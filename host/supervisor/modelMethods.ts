import path from "node:path";
import { DEMO_MODEL, type ModelFacts } from "../../contract/models.js";
import type { ModelDownloads } from "../models/downloadModel.js";
import { ModelLibrary, type LibraryOrigin } from "../models/ModelLibrary.js";
import { hasPartialRecords } from "../models/partialDownloads.js";
import type { HostMethod } from "../../contract/rpc.js";
import type { HostImplementations } from "../rpc/hostMethods.js";
import type { EngineSupervisor } from "./EngineSupervisor.js";

/** The model manager's methods of the RPC spec, as a host serves them (host/rpc/hostMethods.ts forwards each of these here). */
export const modelMethodNames = [
    "inspectModel",
    "switchModel",
    "startDownload",
    "listDownloads",
    "cancelDownload",
    "resumeDownload",
    "listModels",
    "forgetModel"
] as const satisfies readonly HostMethod[];

export type ModelMethodName = (typeof modelMethodNames)[number];

export interface HostModels {
    readonly methods: Pick<HostImplementations, ModelMethodName>;
    /** For the host's shutdown: stops running downloads (their partial files kept to resume) and waits for the library's writes. */
    stopDownloads(): Promise<void>;
}

/** What the model methods need of the engine: its model, and inspecting and switching models (EngineSupervisor). */
export type ModelHost = Pick<EngineSupervisor, "info" | "inspectModel" | "switchModel">;

export interface HostModelsOptions {
    /** The model library's file: `<dataDir>/models.json`, or userData's. */
    readonly libraryFile: string;
    /** ModelDownloads' stallMs; its default when undefined. */
    readonly downloadStallMs?: number;
}

/**
 * The model manager's side of the RPC, in the host's process beside the supervised engine.
 * `resolveModel` turns switchModel's argument ("tiny" or a path) into the file to load. Downloads go
 * into `modelsDirectory`; node-llama-cpp's downloader is loaded on the first download, or at the
 * first listing when a previous host left partial downloads. Every model loaded by path and every
 * finished download goes into the model library, whose facts come from `engine.inspectModel`.
 */
export function modelMethods(
    engine: ModelHost,
    resolveModel: (model: string) => string,
    modelsDirectory: string,
    models: HostModelsOptions
): HostModels {
    let library: Promise<ModelLibrary> | undefined;
    const getLibrary = (): Promise<ModelLibrary> =>
        (library ??= ModelLibrary.open({
            filePath: models.libraryFile,
            inspect: (modelPath) => engine.inspectModel(modelPath),
            isLoaded: (modelPath) => path.resolve(engine.info.modelPath) === modelPath
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
                    inspect: (modelPath) => engine.inspectModel(modelPath),
                    onDone: (download, facts) => remember(download.path, { kind: "downloaded", source: download.source }, facts)
                })
        ));
    const methods: HostModels["methods"] = {
        inspectModel: ({ path: modelPath }) => engine.inspectModel(modelPath),
        switchModel: async ({ model }) => {
            const modelPath = resolveModel(model);
            const info = await engine.switchModel(modelPath);
            if (model !== DEMO_MODEL) {
                await remember(modelPath, { kind: "opened" });
            }
            return info;
        },
        startDownload: async ({ source }) => (await getDownloads()).start(source),
        listDownloads: async () => (downloads === undefined && !hasPartialRecords(modelsDirectory) ? [] : (await getDownloads()).list()),
        cancelDownload: async ({ id }) => (await getDownloads()).cancel(id),
        resumeDownload: async ({ id }) => (await getDownloads()).resume(id),
        listModels: async () => (await getLibrary()).list(),
        forgetModel: async ({ id, deleteFile }) => (await getLibrary()).forget(id, deleteFile === true)
    };
    return {
        methods,
        stopDownloads: async () => {
            await (await downloads)?.dispose();
            await (await library)?.flush();
        }
    };
}
