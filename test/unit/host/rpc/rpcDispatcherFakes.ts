// RpcDispatcher's unit tests' stand-ins: an engine that records what it is asked, callers, and a dispatcher over them.
import type { ChatTurnRequest, EngineClient, EngineInfo, TurnResult } from "../../../../contract/engineProtocol.js";
import type { ModelDownload } from "../../../../contract/models.js";
import type { TurnEvent, TurnListener } from "../../../../contract/turnEvents.js";
import { RequestCancelledError } from "../../../../engine/request/requestErrors.js";
import {
    DownloadNotResumableError,
    DownloadUnknownError,
    LibraryFileNotOwnedError,
    ModelNotGgufError
} from "../../../../host/models/modelErrors.js";
import { hostMethods } from "../../../../host/rpc/hostMethods.js";
import { RpcDispatcher, type RpcCaller } from "../../../../host/rpc/RpcDispatcher.js";
import { EngineRequestError } from "../../../../host/supervisor/engineHostErrors.js";
import type { HostModels } from "../../../../host/supervisor/modelMethods.js";

export const info = { modelName: "tiny" } as EngineInfo;
export const result: TurnResult = {
    text: "Hi!",
    finishReason: "stop",
    usage: { promptTokens: 5, cachedPromptTokens: 0, evaluatedPromptTokens: 5, completionTokens: 2 }
};

export function turn(requestId: string, workspace = "alice"): ChatTurnRequest {
    return { requestId, workspace, messages: [{ role: "user", content: "Hello" }], sampling: { temperature: 0, maxTokens: 8 } };
}

export interface RunningTurn {
    readonly request: ChatTurnRequest;
    readonly listener: TurnListener;
    /** The turn's events as the engine would emit them, under its requestId, to its listener. */
    queued(position: number): void;
    started(): void;
    text(text: string): void;
    readonly signal: AbortSignal;
    finish(value: TurnResult): void;
    fail(error: Error): void;
}

export const download: ModelDownload = {
    id: "d1",
    source: "hf:owner/repo:Q4_K_M",
    path: "/models/m.gguf",
    state: "downloading",
    downloadedBytes: 10,
    totalBytes: 100,
    bytesPerSecond: 5,
    error: undefined,
    resumable: false,
    keptBytes: 0,
    notice: undefined
};

export type FakeEngine = EngineClient & { readonly turns: Map<string, RunningTurn>; readonly calls: string[]; readonly models: HostModels };

/**
 * An engine whose turns run until the test finishes them (an abort rejects like the real one),
 * whose calls answer from a table, and a model manager beside it; every use is recorded in `calls`.
 */
export function fakeEngine(): FakeEngine {
    const turns = new Map<string, RunningTurn>();
    const calls: string[] = [];
    const engineCall = async (method: string, params: Record<string, unknown>): Promise<unknown> => {
        switch (method) {
            case "measure": {
                const { workspace, messages, draft } = params as { workspace: string; messages: unknown[]; draft: string };
                calls.push(`measure ${workspace} ${messages.length} ${draft}`);
                return { workspace, draftTokens: 1, usedTokens: 2, limit: 4096, remainingTokens: 4093, fits: true };
            }
            case "snapshot":
                calls.push("snapshot");
                return {};
            case "forgetWorkspace":
                calls.push(`forget ${String(params.workspace)}`);
                return {};
            case "audit":
                calls.push("audit");
                return { ok: true, numViolations: 0 };
            case "replayableTurns":
                calls.push("replayableTurns");
                return [{ requestId: "r0", workspace: "alice", numTokens: 4 }];
            case "replay": {
                const requestId = String(params.requestId);
                calls.push(`replay ${requestId}`);
                if (requestId !== "r0") {
                    throw new EngineRequestError({ code: "replay_unavailable", message: `Turn ${requestId} cannot be replayed.` });
                }
                return { requestId, numTokens: 4, identical: true, durationMs: 3 };
            }
            case "listDrills":
                calls.push("listDrills");
                return [{ id: "flipped-byte", title: "A byte flips", failureModes: ["flipped-byte"], guard: "checksums" }];
            case "runDrill": {
                const id = String(params.id);
                calls.push(`runDrill ${id}`);
                if (id !== "flipped-byte") {
                    throw new EngineRequestError({ code: "unknown_drill", message: `There is no drill "${id}".` });
                }
                return { id, guardFired: true };
            }
            case "runCanary":
                calls.push(`runCanary ${(params.fillerTokens as number | undefined) ?? "default"}`);
                return { passed: true, probes: [] };
            default:
                throw new Error(`the fake engine serves no ${method}`);
        }
    };
    const models: HostModels = {
        methods: {
            inspectModel: async ({ path }) => {
                calls.push(`inspectModel ${path}`);
                if (!path.endsWith(".gguf")) {
                    throw new ModelNotGgufError(
                        `${path} is not a GGUF file (it starts with "{\\n  "; a GGUF file starts with "GGUF"). Open a .gguf model file.`
                    );
                }
                return { path, architecture: "llama" } as never;
            },
            switchModel: async ({ model }) => {
                calls.push(`switchModel ${model}`);
                return { ...info, modelName: model };
            },
            startDownload: async ({ source }) => {
                calls.push(`startDownload ${source}`);
                return { ...download, source };
            },
            listDownloads: async () => {
                calls.push("listDownloads");
                return [download];
            },
            cancelDownload: async ({ id }) => {
                calls.push(`cancelDownload ${id}`);
                if (id !== download.id) {
                    throw new DownloadUnknownError(`No download has the id "${id}".`);
                }
                return { ...download, state: "cancelled" };
            },
            resumeDownload: async ({ id }) => {
                calls.push(`resumeDownload ${id}`);
                if (id !== download.id) {
                    throw new DownloadNotResumableError(`The download of ${id} cannot be resumed: it finished.`);
                }
                return download;
            },
            listModels: async () => {
                calls.push("listModels");
                return { models: [], problems: [] };
            },
            forgetModel: async ({ id, deleteFile }) => {
                calls.push(`forgetModel ${id} ${deleteFile === true}`);
                if (deleteFile === true) {
                    throw new LibraryFileNotOwnedError("Kvault deletes only files it downloaded.");
                }
                return { models: [], problems: [] };
            }
        },
        stopDownloads: async () => undefined
    };
    return {
        turns,
        calls,
        models,
        get info() {
            calls.push("info");
            return info;
        },
        chat: (request, listener = () => undefined, signal) =>
            new Promise((resolve, reject) => {
                calls.push(`chat ${request.requestId}`);
                signal?.addEventListener("abort", () => reject(new RequestCancelledError("decode")), { once: true });
                const { requestId } = request;
                turns.set(requestId, {
                    request,
                    listener,
                    queued: (position) => void listener({ type: "queued", requestId, position }),
                    started: () => void listener({ type: "started", requestId }),
                    text: (text) => void listener({ type: "text", requestId, text }),
                    signal: signal!,
                    finish: resolve,
                    fail: reject
                });
            }),
        call: (method, params) => engineCall(method, params as Record<string, unknown>) as never
    };
}

/** The dispatcher as a host builds it: the engine once `engine()` resolves, the host's methods over the fake's model manager. */
export function dispatcher(engine: () => Promise<FakeEngine>): RpcDispatcher {
    return new RpcDispatcher(engine, hostMethods({ engine, models: async () => (await engine()).models }));
}

export function caller(id: number): RpcCaller & { readonly events: TurnEvent[] } {
    const events: TurnEvent[] = [];
    return { id, events, send: (event) => events.push(event) };
}

/** Lets pending promise callbacks run. */
export const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
