// The renderer's RPC, one entry per method: its params schema, its result type, which process
// serves it, and how long the host waits for the engine to answer it. Everything else is derived
// from this table: the renderer's proxy (renderer/rpc/), the one IPC channel and the preload
// (main/ipc, main/preload), the server loop both hosts share (host/rpc/RpcDispatcher.ts), and the
// engine protocol's call/answer (contract/engineProtocol.ts). Adding a method is one entry here,
// its implementation (host/rpc/hostMethods.ts, or engine/process/engineMethods.ts), its use in the
// UI, and its test.
import * as v from "valibot";
import {
    backendNamePattern,
    maxBackendModelChars,
    maxBackendUrlChars,
    type BackendView,
    type LeakProbePlanView,
    type LeakProbeVerdicts,
    type RemoteMeasurement
} from "../backends.js";
import type { EngineSnapshot } from "../EngineSnapshot.js";
import { mcpPermissions, type McpServersView } from "../mcp.js";
import { modelPoolSettingLimits, type ModelPoolSettingsView } from "../modelPoolSettings.js";
import type { DraftMeasurement, EmbeddingResult, EngineInfo, FinishReason, TokenizeResult, TurnUsage } from "../engineProtocol.js";
import type { AuditSummary, CanaryReport, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "../isolation.js";
import type { AppliedEngineSettings, AppSettingsView, CreatedApiKey, EngineSettingsPlan } from "../settings.js";
import {
    engineSettingLimits,
    isDraftConfidence,
    isGpuBackendSetting,
    isGpuLayerCount,
    localApiPorts,
    speculationSettings,
    type GpuBackendSetting,
    type GpuLayersSetting
} from "../settings.js";
import { fieldLimits, rpcLimits, turnLimits, utf8ByteLength } from "../limits.js";
import { kvCacheTypes, type LocalModelList, type ModelDownload, type ModelFacts, type ModelLibraryListing } from "../models.js";
import type { ResourceUse } from "../resourceUse.js";
import { catalogueContextSizes, type ModelCatalogueView, type ModelSearchResult, type RepoFilesResult } from "../modelCatalogue.js";
import { MAX_REQUEST_LOG_ENTRIES, type RequestLogEntry } from "../requestLog.js";
import type { MemoryEventsPage } from "../memoryEvents.js";
import { workspaceLimits, type LoadedWorkspaces, type StoredMessage, type StoredWorkspace } from "../workspaces.js";
import { boolean, describeValue as describe, integer, list, nonEmptyText, oneOf, params, text } from "./fieldSchemas.js";
import { readStoredMessage, readWorkspaceMeta, storeIdParam, storeRecordField } from "./storeSchemas.js";
import { readPreset } from "./presetSchemas.js";
import { attachmentLimits, type ExtractedAttachment } from "../attachments.js";
import { retrievalLimits, type RetrievalStatus, type RetrievedChunk } from "../retrieval.js";
import { presetLimits, type PresetImportResult, type PresetList } from "../presets.js";
import { chatTurnEntries, conversationChecks, idSchema, messagesSchema, turnChecks, workspaceSchema } from "./turnSchemas.js";

/** How long a host waits for the engine's answer to a call, ms (host/supervisor/EngineConnection.ts). */
export const callTimeouts = Object.freeze({
    /** measure, snapshot, forgetWorkspace, audit, replayableTurns, listDrills. */
    quickMs: 30_000,
    /** replay recomputes a turn in a fresh context; a drill starts sandboxed engines twice (about 10 s on a laptop). */
    longMs: 120_000,
    /** The canary prefills thousands of tokens and runs four probes: minutes for a large model on a CPU. */
    canaryMs: 600_000
});

/** What a turn answers: the whole answer, why it ended, and what it cost. */
export interface ChatTurnResult {
    readonly text: string;
    readonly finishReason: FinishReason;
    readonly usage: TurnUsage;
    /** A chat's turn (one with an answerId): the answer as the host kept it in the chat (id, parent, at, timing), to mirror as it is. */
    readonly answer?: StoredMessage;
}

/** A chat's turn that runs now (activeTurns). */
export interface ActiveTurn {
    readonly requestId: string;
    readonly workspace: string;
    /** The message id its answer is kept under. */
    readonly answerId: string;
    /** The message its answer follows (null: the chat's first); absent when the turn named none (after the chat's last message). */
    readonly answerParent?: string | null;
    /** waiting: for the engine to start or take it; queued: behind `queuePosition - 1` others; running: generating. */
    readonly phase: "waiting" | "queued" | "running";
    readonly queuePosition?: number;
    /** Characters streamed so far. */
    readonly numChars: number;
}

/** What one embed call may carry. */
export const embeddingLimits = Object.freeze({
    maxInputs: 2_048,
    maxInputTokens: 1_048_576
});

declare const resultType: unique symbol;

/**
 * One method. `serve: "engine"` goes to the engine process as a `call` command and waits at most
 * `timeoutMs`; `serve: "host"` is answered by the host (the store, the model library, settings).
 * chat is the engine's too, as a turn: it streams, and has no call deadline.
 */
interface MethodSpec<P extends v.GenericSchema, R> {
    readonly params: P;
    readonly serve: "engine" | "host";
    readonly timeoutMs?: number;
    readonly [resultType]?: R;
}

function method<R>() {
    return <P extends v.GenericSchema, S extends "engine" | "host">(spec: {
        readonly params: P;
        readonly serve: S;
        readonly timeoutMs?: number;
    }): MethodSpec<P, R> & { readonly serve: S } => spec;
}

const none = (name: string) => params(name, {});
const modelPath = nonEmptyText(fieldLimits.maxModelPathChars, 'give the full path of a .gguf file, or "tiny" for the built-in demo model', {
    trim: true
});
const quick = { serve: "engine", timeoutMs: callTimeouts.quickMs } as const;
/** A loaded local model's id (listLocalModels'): the isolation calls and the page map run on it instead of the host's own. */
const loadedModelSchema = idSchema("name one of listLocalModels' loaded models");
const long = { serve: "engine", timeoutMs: callTimeouts.longMs } as const;

/** Parts an import may have: the largest document the store takes, at 3 bytes a character, in the smallest parts splitUtf8 makes. */
const MAX_IMPORT_PARTS = Math.ceil((workspaceLimits.maxImportChars * 3) / (rpcLimits.maxImportPartBytes - 3));

const MAX_CHAT_IMPORT_PARTS = Math.ceil((workspaceLimits.maxChatImportChars * 3) / (rpcLimits.maxImportPartBytes - 3));

/** One part of an imported document. */
const importPartText = v.pipe(
    v.string((issue) => `must be a string; got ${describe(issue.input)}.`),
    v.check(
        (part) => utf8ByteLength(part) <= rpcLimits.maxImportPartBytes,
        `is longer than a part may be (${rpcLimits.maxImportPartBytes.toLocaleString("en-US")} bytes of UTF-8); send the document in more parts.`
    )
);

/** A part's number is below the count of parts. */
function partInRange<T extends { readonly part: number; readonly numParts: number }>() {
    return v.check(
        (input: T) => input.part < input.numParts,
        (issue) => {
            const { part, numParts } = issue.input;
            return `part is ${part}, but a document in ${numParts} part(s) has parts 0 to ${numParts - 1}; number them from 0.`;
        }
    );
}

/** An engine setting's range, said as the settings file's reader says it. */
function engineCount(name: keyof typeof engineSettingLimits) {
    const { min, max } = engineSettingLimits[name];
    return integer(
        min,
        max,
        (issue) =>
            `is ${describe(issue.input)}; ${name} must be a whole number from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}.`
    );
}

/** The compute backend: "auto", "off" or a backend's name. */
function gpuBackend() {
    return v.custom<GpuBackendSetting>(
        isGpuBackendSetting,
        (issue) => `is ${describe(issue.input)}; gpu must be "auto", "off", "cuda", "vulkan" or "metal".`
    );
}

/** Layers on the GPU: "auto" or a number; the model's own layer count is the plan's to check. */
function gpuLayers() {
    const { min, max } = engineSettingLimits.gpuLayers;
    return v.custom<GpuLayersSetting>(
        (value) => value === "auto" || isGpuLayerCount(value),
        (issue) =>
            `is ${describe(issue.input)}; gpuLayers must be "auto" or a whole number of layers from ${min} to ${max.toLocaleString("en-US")}.`
    );
}

/** planEngineSettings' and applyEngineSettings' params: the engine settings to change (contract/KvaultBridge.ts EngineSettings); the others stay. */
const engineSettingsChange = {
    contextSize: v.optional(engineCount("contextSize")),
    gpu: v.optional(gpuBackend()),
    gpuLayers: v.optional(gpuLayers()),
    threads: v.optional(v.nullable(engineCount("threads"))),
    flashAttention: v.optional(boolean()),
    kvCacheType: v.optional(oneOf(kvCacheTypes)),
    decodeSequences: v.optional(engineCount("decodeSequences")),
    pageTokens: v.optional(engineCount("pageTokens")),
    poolPages: v.optional(v.nullable(engineCount("poolPages"))),
    speculation: v.optional(oneOf(speculationSettings)),
    draftMaxTokens: v.optional(engineCount("draftMaxTokens")),
    draftMinConfidence: v.optional(
        v.custom<number>(isDraftConfidence, (issue) => `is ${describe(issue.input)}; draftMinConfidence must be a probability from 0 to 1.`)
    ),
    draftModel: v.optional(
        v.nullable(
            nonEmptyText(fieldLimits.maxModelPathChars, "give the full path of the draft model's .gguf file, or null for none", {
                trim: true
            })
        )
    )
};

/** An API key's id: its workspace namespace (host/http/ApiKeys.ts API_KEY_ID_PATTERN). */
const apiKeyId = v.pipe(
    v.string((issue) => `must be a string; got ${describe(issue.input)}.`),
    v.regex(/^[A-Za-z0-9_-]{1,40}$/, (issue) => `is ${describe(issue.input)}; an API key's id is 1 to 40 letters, digits, '_' or '-'.`)
);

/** A remote backend's name (contract/backends.ts backendNamePattern). */
const backendName = v.pipe(
    v.string((issue) => `must be a string; got ${describe(issue.input)}.`),
    v.regex(backendNamePattern, (issue) => `is ${describe(issue.input)}; a backend's name is 1 to 40 letters, digits, '_' or '-'.`)
);

/** What importWorkspaces and importChat answer for every part but the last. */
export interface ImportProgress {
    readonly done: false;
    readonly numPartsReceived: number;
}

export const rpcSpec = {
    info: method<EngineInfo>()({ params: none("info"), serve: "host" }),
    /**
     * One turn; its events stream to the caller meanwhile (contract/turnEvents.ts). With
     * `answerId` it is a chat's turn and the host's (host/rpc/HostTurns.ts): the host keeps the
     * answer in the stored chat `workspace` as message `answerId` (on disk before this answers; a
     * Stop keeps what streamed, as "stopped"), and the turn runs on when its caller goes away.
     * Without it the turn is its caller's: nothing is kept, and it ends when its caller goes away.
     * `answerParent` is the message the answer follows (null: the chat's first; for a regenerate
     * the user's question, not the chat's last message); absent, it follows the chat's last one.
     */
    chat: method<ChatTurnResult>()({
        params: v.pipe(
            conversationChecks(
                turnChecks(
                    params("chat", {
                        ...chatTurnEntries,
                        answerId: v.optional(storeIdParam),
                        answerParent: v.optional(v.nullable(storeIdParam))
                    })
                ),
                { endsWithUser: false }
            ),
            v.check(
                (call) => call.answerParent === undefined || call.answerId !== undefined,
                "answerParent says where a kept answer goes, but the chat names no answerId: give answerId too, or leave answerParent out."
            )
        ),
        serve: "engine"
    }),
    /** Cancels a turn: its caller's own, or a chat's turn (one with an answerId) from any caller; `cancelled` is false when none by that id runs. */
    cancel: method<{ cancelled: boolean }>()({ params: params("cancel", { requestId: idSchema() }), serve: "host" }),
    /** The chats' turns running now (those started with an answerId), oldest first: what a page that (re)loads attaches to. */
    activeTurns: method<readonly ActiveTurn[]>()({ params: none("activeTurns"), serve: "host" }),
    /**
     * Follows a chat's turn from this caller: its state and the text streamed so far come at once as
     * events (queued or started, then one text event), the rest live, and the answer is the turn's,
     * as chat's. A turn that ended a moment ago answers at once; one unknown fails with turn_not_found.
     */
    attachTurn: method<ChatTurnResult>()({ params: params("attachTurn", { requestId: idSchema() }), serve: "host" }),
    measure: method<DraftMeasurement>()({
        params: conversationChecks(
            params("measure", { workspace: workspaceSchema, messages: messagesSchema(0), draft: text(turnLimits.maxMessageChars) }),
            { endsWithUser: false }
        ),
        ...quick
    }),
    /** The page map of the host's own model, or of the loaded local model `model` names (model_not_loaded when it is not loaded). */
    snapshot: method<EngineSnapshot>()({ params: params("snapshot", { model: v.optional(loadedModelSchema) }), ...quick }),
    /**
     * The memory timeline after `afterSeq` (0: from the oldest kept), at most MAX_MEMORY_EVENTS_PER_CALL events a call:
     * the host's own model's engine's, or the loaded local model's `model` names (model_not_loaded when it is not loaded).
     */
    memoryEvents: method<MemoryEventsPage>()({
        params: params("memoryEvents", { afterSeq: integer(0, Number.MAX_SAFE_INTEGER), model: v.optional(loadedModelSchema) }),
        ...quick
    }),
    /** Frees and scrubs the workspace's KV on the host's own engine and on every loaded local model's. */
    forgetWorkspace: method<Record<string, never>>()({ params: params("forgetWorkspace", { workspace: workspaceSchema }), ...quick }),
    /** I1–I7 over the whole engine, now: the host's own model's, or the loaded local model `model` names; the summary names its model. */
    audit: method<AuditSummary>()({ params: params("audit", { model: v.optional(loadedModelSchema) }), ...quick }),
    /** Finished greedy turns the engine keeps for replay, oldest first. */
    replayableTurns: method<readonly ReplayableTurn[]>()({ params: none("replayableTurns"), ...quick }),
    /** Differential replay of the turn sent with this requestId; fails with replay_unavailable when it is not kept. */
    replay: method<ReplaySummary>()({ params: params("replay", { requestId: idSchema() }), ...long }),
    listDrills: method<readonly DrillDescription[]>()({ params: none("listDrills"), ...quick }),
    /** Runs the fault drill `id` in sandboxed engines (seconds); fails with unknown_drill for an id not listed. */
    runDrill: method<DrillReport>()({
        params: params("runDrill", { id: idSchema("name one of listDrills' drills"), model: v.optional(loadedModelSchema) }),
        ...long
    }),
    /**
     * The canary probe on the loaded model, in two temporary workspaces (tens of seconds on a CPU);
     * `fillerTokens` sizes A's prompt (default: from the window and free pages; the canary checks it
     * against the window). Fails with canary_running while one runs.
     */
    runCanary: method<CanaryReport>()({
        params: params("runCanary", {
            fillerTokens: v.optional(
                integer(1, Number.MAX_SAFE_INTEGER, (issue) => `must be a whole number of at least 1; got ${describe(issue.input)}.`)
            ),
            model: v.optional(loadedModelSchema)
        }),
        serve: "engine",
        timeoutMs: callTimeouts.canaryMs
    }),
    /**
     * Embeddings of up to `embeddingLimits.maxInputs` texts or token lists, in order, from an
     * embedding context of the loaded model (created on first use); an input longer than that
     * context fails with input_too_long and the numbers.
     */
    embed: method<EmbeddingResult>()({
        params: params("embed", {
            inputs: list(
                v.union(
                    [
                        text(turnLimits.maxMessageChars),
                        list(integer(0, 2 ** 31 - 1), { minItems: 1, maxItems: embeddingLimits.maxInputTokens, what: "token ids" })
                    ],
                    (issue) => `must be a string or a list of token ids; got ${describe(issue.input)}.`
                ),
                { minItems: 1, maxItems: embeddingLimits.maxInputs, what: "inputs" }
            )
        }),
        ...long
    }),
    /**
     * Liveness: answered by the engine process's own event loop, so a frozen or wedged process is
     * told apart from a busy one (host/supervisor/LivenessMonitor.ts pings with its own deadline).
     */
    ping: method<Record<string, never>>()({ params: none("ping"), ...quick }),
    /** A GGUF file's facts and memory estimate, read from its header; fails with model_unreadable, model_not_gguf or model_unsupported. */
    inspectModel: method<ModelFacts>()({ params: params("inspectModel", { path: modelPath }), serve: "host" }),
    /** Loads `model` (a GGUF path on the host, or "tiny"); running turns end with model_switched. */
    switchModel: method<EngineInfo>()({ params: params("switchModel", { model: modelPath }), serve: "host" }),
    /** Starts downloading an http(s) URL or an `hf:` reference into the host's models directory; fails with download_source_invalid. */
    startDownload: method<ModelDownload>()({
        params: params("startDownload", {
            source: nonEmptyText(
                fieldLimits.maxDownloadSourceChars,
                "give a model URL (http:// or https://) or a Hugging Face reference (hf:owner/repo:quant)",
                { trim: true }
            )
        }),
        serve: "host"
    }),
    /** Every download since the host started, and the partial ones an earlier start left (failed, resumable), oldest first. */
    listDownloads: method<readonly ModelDownload[]>()({ params: none("listDownloads"), serve: "host" }),
    /** Cancels a running download, or discards a resumable one (its partial file is deleted); fails with download_unknown. */
    cancelDownload: method<ModelDownload>()({
        params: params("cancelDownload", { id: idSchema("name one of listDownloads' downloads") }),
        serve: "host"
    }),
    /** Continues a failed download from the bytes on disk (or from zero, saying why in `notice`); fails with download_unknown or download_not_resumable. */
    resumeDownload: method<ModelDownload>()({
        params: params("resumeDownload", { id: idSchema("name one of listDownloads' downloads") }),
        serve: "host"
    }),
    /** The model library: every model opened by path or downloaded, with its facts, most recently used first. */
    listModels: method<ModelLibraryListing>()({ params: none("listModels"), serve: "host" }),
    /** Removes a library entry; `deleteFile` also deletes a downloaded model's file. Fails with library_model_unknown, library_file_not_owned or library_model_in_use. */
    forgetModel: method<ModelLibraryListing>()({
        params: params("forgetModel", { id: idSchema("name one of listModels' models"), deleteFile: v.optional(boolean()) }),
        serve: "host"
    }),
    /** The workspaces and chats the host keeps on disk, and what it set aside as damaged when it started (contract/workspaces.ts). */
    loadWorkspaces: method<LoadedWorkspaces>()({ params: none("loadWorkspaces"), serve: "host" }),
    /**
     * Once, after an upgrade: the renderer's old localStorage document (format 1), in parts of at
     * most rpcLimits.maxImportPartBytes, numbered from 0, in order. Every part but the last answers
     * with the count received; the last with the workspaces. Takes nothing (numImported 0) when the
     * host has workspaces already.
     */
    importWorkspaces: method<ImportProgress | (LoadedWorkspaces & { readonly done: true; readonly numImported: number })>()({
        params: v.pipe(
            params("importWorkspaces", {
                importId: idSchema("give the import an id of its own"),
                part: integer(0, MAX_IMPORT_PARTS - 1),
                numParts: integer(1, MAX_IMPORT_PARTS),
                text: importPartText
            }),
            partInRange()
        ),
        serve: "host"
    }),
    /** Creates a workspace (at the end) or changes its name, colour or settings; fails with store_write_failed or store_limit_exceeded. */
    saveWorkspace: method<Record<string, never>>()({
        params: params("saveWorkspace", { workspace: storeRecordField(readWorkspaceMeta) }),
        serve: "host"
    }),
    /** Deletes a workspace and its chat file; the selection moves to a neighbour. */
    removeWorkspace: method<Record<string, never>>()({ params: params("removeWorkspace", { workspace: storeIdParam }), serve: "host" }),
    selectWorkspace: method<Record<string, never>>()({ params: params("selectWorkspace", { workspace: storeIdParam }), serve: "host" }),
    /** Appends one message to a workspace's chat, on disk (fsync) before it answers; fails with workspace_not_found. */
    appendMessage: method<Record<string, never>>()({
        params: params("appendMessage", { workspace: storeIdParam, message: storeRecordField(readStoredMessage) }),
        serve: "host"
    }),
    /** Regenerate: drops the chat's last message if it is the answer `messageId`. */
    dropLastAnswer: method<{ dropped: boolean }>()({
        params: params("dropLastAnswer", { workspace: storeIdParam, messageId: storeIdParam }),
        serve: "host"
    }),
    /** Empties a workspace's chat, its branches too. */
    clearChat: method<Record<string, never>>()({ params: params("clearChat", { workspace: storeIdParam }), serve: "host" }),
    /** Shows the branch through `messageId` (an earlier answer, or the message before an edit); `selected` is false when it is not in the chat. */
    selectBranch: method<{ selected: boolean }>()({
        params: params("selectBranch", { workspace: storeIdParam, messageId: storeIdParam }),
        serve: "host"
    }),
    /** Deletes one message of a chat; the messages after it follow the one before it. `deleted` is false when it is not there. */
    deleteMessage: method<{ deleted: boolean }>()({
        params: params("deleteMessage", { workspace: storeIdParam, messageId: storeIdParam }),
        serve: "host"
    }),
    /** A copy of `workspace` (settings, chat, branches) at the end of the list as `id`, named `name`; answers the copy. */
    duplicateWorkspace: method<StoredWorkspace>()({
        params: params("duplicateWorkspace", {
            workspace: storeIdParam,
            id: storeIdParam,
            name: nonEmptyText(workspaceLimits.maxNameChars, "name the copy", { trim: true })
        }),
        serve: "host"
    }),
    /**
     * Import JSON: a chat file that Export JSON wrote (contract/workspaces.ts ChatExport), in parts
     * as importWorkspaces takes them, added as workspace `id`. The last part answers with the new
     * workspace; a bad file fails with chat_import_invalid, and nothing is imported.
     */
    importChat: method<ImportProgress | { readonly done: true; readonly workspace: StoredWorkspace }>()({
        params: v.pipe(
            params("importChat", {
                importId: idSchema("give the import an id of its own"),
                id: storeIdParam,
                part: integer(0, MAX_CHAT_IMPORT_PARTS - 1),
                numParts: integer(1, MAX_CHAT_IMPORT_PARTS),
                text: importPartText
            }),
            partInRange()
        ),
        serve: "host"
    }),
    /** The settings screen's view (both hosts); a host started without settings (a test's) answers settings_unavailable. */
    getSettings: method<AppSettingsView>()({ params: none("getSettings"), serve: "host" }),
    /** Switches the desktop app's local API; resolves once it serves (or has stopped). A port in use is an error, and nothing changes. The headless server's API is itself: settings_unavailable. */
    setLocalApi: method<AppSettingsView>()({
        params: params("setLocalApi", {
            enabled: boolean(),
            port: integer(
                localApiPorts.min,
                localApiPorts.max,
                (issue) => `is ${describe(issue.input)}; choose a whole number from ${localApiPorts.min} to ${localApiPorts.max}.`
            )
        }),
        serve: "host"
    }),
    /**
     * What applying these engine settings would take (memory of each part against this machine's
     * free RAM, and VRAM where known) and restart; changes nothing. A setting given on the command
     * line fails with setting_from_command_line.
     */
    planEngineSettings: method<EngineSettingsPlan>()({ params: params("planEngineSettings", engineSettingsChange), serve: "host" }),
    /**
     * Applies engine settings: planned again, refused when they do not fit (engine_settings_refused),
     * then the engine restarts with them (running turns end with engine_settings_changed) and
     * settings.json keeps them. Resolves once the new engine is ready.
     */
    applyEngineSettings: method<AppliedEngineSettings>()({ params: params("applyEngineSettings", engineSettingsChange), serve: "host" }),
    /** A new API key with its own workspace namespace, in force at once; its secret is in this answer only. */
    createApiKey: method<CreatedApiKey>()({ params: params("createApiKey", { id: apiKeyId }), serve: "host" }),
    /** Revokes a key created in the settings: its next request is a 401, its open streams close. */
    revokeApiKey: method<AppSettingsView>()({ params: params("revokeApiKey", { id: apiKeyId }), serve: "host" }),
    /**
     * The desktop app's native Open dialog for a GGUF, over its window: the one absolute path chosen,
     * or canceled. Nothing is read or loaded (inspectModel, switchModel do that). The headless server
     * has no window to show it in (dialog_unavailable: type the path instead).
     */
    chooseModelFile: method<{ readonly kind: "chosen"; readonly path: string } | { readonly kind: "canceled" }>()({
        params: none("chooseModelFile"),
        serve: "host"
    }),
    /** The engine process's RAM, its GPU's VRAM, KV bytes per role and tokens per second per workspace, read in the engine (the status bar). */
    resourceUse: method<ResourceUse>()({ params: none("resourceUse"), ...quick }),
    /**
     * The curated catalogue, every file with a "fits this machine" verdict (free RAM, the engine's
     * free VRAM) for `contextSize` tokens of KV (default: the engine's window).
     */
    modelCatalogue: method<ModelCatalogueView>()({
        params: params("modelCatalogue", {
            contextSize: v.optional(
                integer(
                    catalogueContextSizes.min,
                    catalogueContextSizes.max,
                    (issue) =>
                        `is ${describe(issue.input)}; give a whole number of tokens from ${catalogueContextSizes.min} to ${catalogueContextSizes.max.toLocaleString("en-US")}.`
                )
            )
        }),
        serve: "host"
    }),
    /** Hugging Face's GGUF models matching `query`, most downloaded first; offline, says so (the catalogue is all there is). */
    searchModels: method<ModelSearchResult>()({
        params: params("searchModels", { query: nonEmptyText(200, "type a few letters of a model's name", { trim: true }) }),
        serve: "host"
    }),
    /** A Hugging Face repository's GGUF files with their sizes and verdicts (the file's size alone: no header yet). */
    modelRepoFiles: method<RepoFilesResult>()({
        params: params("modelRepoFiles", {
            repo: v.pipe(
                nonEmptyText(200, "name a repository as owner/name", { trim: true }),
                v.regex(/^[\w.-]+\/[\w.-]+$/, (issue) => `is ${describe(issue.input)}; name a Hugging Face repository as owner/name.`)
            )
        }),
        serve: "host"
    }),
    /**
     * The remote backends in force (the settings screen's, or `--backend`'s for a run), each with its models now
     * (asked of it at once; one that cannot be asked is listed with why): what a new workspace can
     * run on besides this computer.
     */
    listBackends: method<{ readonly backends: readonly BackendView[] }>()({ params: none("listBackends"), serve: "host" }),
    /**
     * The local models a workspace can choose as its `localModel`: the host's own first, then each
     * model found on disk (as /v1/models names them), loaded or not. `loadedOnly`: the loaded ones alone, read from
     * the pool without rescanning the model folders (what the Memory and Isolation views poll).
     */
    listLocalModels: method<LocalModelList>()({
        params: params("listLocalModels", { loadedOnly: v.optional(boolean()) }),
        serve: "host"
    }),
    /** The local models' settings (idle time, memory budget, model folders): settings.json's, what runs, and what the command line set. */
    getModelPoolSettings: method<ModelPoolSettingsView>()({ params: none("getModelPoolSettings"), serve: "host" }),
    /** Saves the settings given (the others stay); in force at once. A value out of its range or a folder not there: invalid_model_pool_setting. */
    setModelPoolSettings: method<ModelPoolSettingsView>()({
        params: params("setModelPoolSettings", {
            modelIdleSeconds: v.optional(
                integer(
                    modelPoolSettingLimits.modelIdleSeconds.min,
                    modelPoolSettingLimits.modelIdleSeconds.max,
                    (issue) =>
                        `is ${describe(issue.input)}; choose a whole number of seconds from ${modelPoolSettingLimits.modelIdleSeconds.min} to ${modelPoolSettingLimits.modelIdleSeconds.max.toLocaleString("en-US")}.`
                )
            ),
            modelsMemoryMb: v.optional(
                v.nullable(
                    integer(
                        modelPoolSettingLimits.modelsMemoryMb.min,
                        modelPoolSettingLimits.modelsMemoryMb.max,
                        (issue) =>
                            `is ${describe(issue.input)}; choose a whole number of MiB from ${modelPoolSettingLimits.modelsMemoryMb.min} to ${modelPoolSettingLimits.modelsMemoryMb.max.toLocaleString("en-US")}, or null for the machine's RAM.`
                    )
                )
            ),
            modelsFolders: v.optional(
                list(nonEmptyText(modelPoolSettingLimits.maxFolderChars, "give a folder's full path", { trim: true }), {
                    maxItems: modelPoolSettingLimits.maxFolders,
                    what: "folders"
                })
            )
        }),
        serve: "host"
    }),
    /**
     * The context meter of a workspace on a remote backend (its stored `backend`): the draft and
     * the conversation counted by the server's own tokenizer, its window and its KV usage, each
     * with its source, or why the server does not say (never a guess). A local workspace: measure.
     */
    measureRemote: method<RemoteMeasurement>()({
        params: conversationChecks(
            params("measureRemote", { workspace: storeIdParam, messages: messagesSchema(0), draft: text(turnLimits.maxMessageChars) }),
            { endsWithUser: false }
        ),
        serve: "host"
    }),
    /**
     * The leak probe's plan against `target` ("kvault": this Kvault's own API; `NAME/<model id>`: a
     * backend's model): the window it found and where, and what the run will send. Sends only the
     * discovery requests (/v1/models, /props).
     */
    planLeakProbe: method<LeakProbePlanView>()({
        params: params("planLeakProbe", {
            target: nonEmptyText(600, 'name "kvault" or a backend\'s model, NAME/<model id>, as listBackends lists them')
        }),
        serve: "host"
    }),
    /** Runs the leak probe against `target` (its plan, bounded; minutes on a CPU); its verdicts. One run at a time. */
    runLeakProbe: method<LeakProbeVerdicts>()({
        params: params("runLeakProbe", {
            target: nonEmptyText(600, 'name "kvault" or a backend\'s model, NAME/<model id>, as listBackends lists them')
        }),
        serve: "host"
    }),
    /** The loaded model's tokens for `content` (special-token names parsed), the BOS in front with `addSpecial`; pieces with `withPieces`. */
    tokenize: method<TokenizeResult>()({
        params: params("tokenize", { content: text(turnLimits.maxMessageChars), addSpecial: boolean(), withPieces: boolean() }),
        ...quick
    }),
    /**
     * The loaded model's tokens for a conversation, rendered by its chat template with the
     * assistant's turn opened after it, as a chat turn's prompt begins (the API's `/tokenize`
     * with `messages`, vLLM's shape): what a meter of this Kvault as another's backend counts.
     */
    tokenizeChat: method<{ readonly tokens: readonly number[] }>()({
        params: conversationChecks(params("tokenizeChat", { messages: messagesSchema(1) }), { endsWithUser: false }),
        ...quick
    }),
    /** The API's request log (contract/requestLog.ts): the last `limit` requests (default 100), oldest first; empty when the API is off. */
    requestLog: method<readonly RequestLogEntry[]>()({
        params: params("requestLog", { limit: v.optional(integer(1, MAX_REQUEST_LOG_ENTRIES)) }),
        serve: "host"
    }),
    /** The audit record of this data directory as JSON Lines (a MemoryRecordHeader, then every kept MemoryEvent): the Memory view's Export. */
    exportMemoryRecord: method<{ readonly jsonl: string }>()({ params: none("exportMemoryRecord"), serve: "host" }),
    /** The text of token ids of the loaded model; an id outside its vocabulary fails with invalid_request. */
    detokenize: method<{ readonly content: string }>()({
        params: params("detokenize", {
            tokens: list(integer(0, 2 ** 31 - 1), { minItems: 0, maxItems: embeddingLimits.maxInputTokens, what: "token ids" })
        }),
        ...quick
    }),
    /**
     * Adds a remote backend to the settings, or replaces the one of that name, in force at once
     * (the same rules as `--backend`; invalid_backend_setting says which part and why). `key`:
     * absent keeps the one it has (none for a new backend), null removes it. A headless server
     * started with --backend answers setting_from_command_line.
     */
    setBackend: method<AppSettingsView>()({
        params: params("setBackend", {
            name: backendName,
            url: nonEmptyText(maxBackendUrlChars, "give the server's base URL, e.g. http://127.0.0.1:8000/v1", { trim: true }),
            model: v.optional(v.nullable(nonEmptyText(maxBackendModelChars, "give the backend's model id, or leave it out for all"))),
            key: v.optional(v.nullable(nonEmptyText(4_096, "give the backend's key, or leave it out"))),
            allowRemote: boolean()
        }),
        serve: "host"
    }),
    /** Removes a backend of the settings: its workspaces' next turns fail with backend_not_found; a turn running on it finishes. */
    removeBackend: method<AppSettingsView>()({ params: params("removeBackend", { name: backendName }), serve: "host" }),
    /** The MCP servers of the data directory's mcp.json, each connected with its tools or failed with why (host/mcp/McpManager.ts). */
    listMcpServers: method<McpServersView>()({ params: none("listMcpServers"), serve: "host" }),
    /**
     * The user's answer to a chat turn's tool call waiting for permission (its `tool` event): run
     * it once, for the rest of this chat, always (that tool of that server), or deny it. `answered`
     * is false when no call by that id waits (answered already from another page, or the turn ended).
     */
    answerToolCall: method<{ readonly answered: boolean }>()({
        params: params("answerToolCall", {
            requestId: idSchema(),
            callId: idSchema("name the call its tool event named"),
            permission: oneOf(mcpPermissions)
        }),
        serve: "host"
    }),
    /** The saved presets (contract/presets.ts), the shipped ones until the first change; a damaged presets file fails with preset_file_invalid. */
    listPresets: method<PresetList>()({ params: none("listPresets"), serve: "host" }),
    /** Adds a preset, or replaces the one with its id (an edit, a rename); on disk before it answers. */
    savePreset: method<PresetList>()({ params: params("savePreset", { preset: storeRecordField(readPreset) }), serve: "host" }),
    deletePreset: method<PresetList & { readonly deleted: boolean }>()({
        params: params("deletePreset", { id: storeIdParam }),
        serve: "host"
    }),
    /**
     * Import: a file Export wrote, or an LM Studio preset file; every preset in it is added under a
     * new id, and the LM Studio fields Kvault has no setting for are named. A bad file fails with
     * preset_import_invalid, and nothing is imported.
     */
    importPresets: method<PresetImportResult>()({
        params: params("importPresets", {
            fileName: nonEmptyText(255, "give the file's name", { trim: true }),
            text: text(presetLimits.maxImportChars)
        }),
        serve: "host"
    }),
    /**
     * The text of a file attached to a message (contract/attachments.ts), read by the host: UTF-8
     * text, a PDF's text layer, a DOCX's paragraphs. Fails with attachment_unsupported,
     * attachment_unreadable, attachment_encrypted or attachment_too_large, saying why.
     */
    extractAttachment: method<ExtractedAttachment>()({
        params: params("extractAttachment", {
            fileName: nonEmptyText(attachmentLimits.maxNameChars, "give the file's name", { trim: true }),
            dataBase64: text(Math.ceil(attachmentLimits.maxFileBytes / 3) * 4)
        }),
        serve: "host"
    }),
    /** Whether retrieval is on for a workspace, and the files in its own index (contract/retrieval.ts). */
    retrievalStatus: method<RetrievalStatus>()({ params: params("retrievalStatus", { workspace: storeIdParam }), serve: "host" }),
    /** Turns a workspace's retrieval on (an empty index of its own) or off (its index deleted). */
    setRetrieval: method<RetrievalStatus>()({
        params: params("setRetrieval", { workspace: storeIdParam, enabled: boolean() }),
        serve: "host"
    }),
    /** Chunks a file's text, embeds the chunks with the loaded model and keeps them in the workspace's index; retrieval_off when it is off. */
    indexAttachment: method<RetrievalStatus>()({
        params: params("indexAttachment", {
            workspace: storeIdParam,
            fileName: nonEmptyText(attachmentLimits.maxNameChars, "give the file's name", { trim: true }),
            text: nonEmptyText(attachmentLimits.maxTextChars, "give the file's text")
        }),
        serve: "host"
    }),
    /** The chunks of this workspace's index nearest to `query`, best first; none when its retrieval is off or empty. */
    retrieveChunks: method<readonly RetrievedChunk[]>()({
        params: params("retrieveChunks", {
            workspace: storeIdParam,
            query: text(turnLimits.maxMessageChars),
            maxChunks: integer(1, retrievalLimits.maxChunksPerQuestion)
        }),
        serve: "host"
    })
};

export type RpcSpec = typeof rpcSpec;
export type RpcMethod = keyof RpcSpec;
/** What a caller sends: the schema's output (the fields it names), read-only all the way down. */
export type RpcParams<M extends RpcMethod> = Immutable<v.InferOutput<RpcSpec[M]["params"]>>;
export type RpcResult<M extends RpcMethod> = RpcSpec[M] extends MethodSpec<v.GenericSchema, infer R> ? R : never;
/** The methods the engine process serves as calls (chat, which streams, is a turn). */
export type EngineMethod = Exclude<{ [M in RpcMethod]: RpcSpec[M]["serve"] extends "engine" ? M : never }[RpcMethod], "chat">;
/** The methods a host answers itself. */
export type HostMethod = Exclude<RpcMethod, EngineMethod | "chat">;
/** The host methods of turns, which the dispatcher answers from the turns it runs (host/rpc/RpcDispatcher.ts). */
export type TurnMethod = "cancel" | "activeTurns" | "attachTurn";

type Immutable<T> = T extends (infer U)[] ? readonly Immutable<U>[] : T extends object ? { readonly [K in keyof T]: Immutable<T[K]> } : T;

/** An engine call's deadline (every engine-served method but chat has one: the spec's test holds it to that). */
export function callTimeoutMs(method: EngineMethod): number {
    const timeoutMs: number | undefined = rpcSpec[method].timeoutMs;
    if (timeoutMs === undefined) {
        throw new Error(`rpcSpec.${method} is served by the engine and has no timeoutMs; give it one.`);
    }
    return timeoutMs;
}

export const rpcMethods = Object.keys(rpcSpec) as RpcMethod[];
export const engineMethods = rpcMethods.filter((name): name is EngineMethod => rpcSpec[name].serve === "engine" && name !== "chat");
