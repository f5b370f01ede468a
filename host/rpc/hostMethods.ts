import type { EngineClient } from "../../contract/engineProtocol.js";
import type { AppliedEngineSettings, AppSettingsView, CreatedApiKey, EngineSettingsPlan, LocalApiChange } from "../../contract/settings.js";
import type { HostMethod, RpcParams, RpcResult, TurnMethod } from "../../contract/rpc.js";
import { Backends } from "../backends/Backends.js";
import { LeakProbes, type OwnApi } from "../backends/leakProbeTargets.js";
import { measureRemote } from "../backends/remoteMeters.js";
import type { WorkspaceStore } from "../store/WorkspaceStore.js";
import { StoreOpenError } from "../store/storeErrors.js";
import { modelMethodNames, type HostModels, type ModelMethodName } from "../supervisor/modelMethods.js";
import { ImportStaging } from "./ImportStaging.js";
import { workspaceLimits } from "../../contract/workspaces.js";
import { InvalidRequestError, KvaultError } from "../../engine/index.js";
import { ModelCatalogue } from "../models/catalogue/ModelCatalogue.js";
import { DEFAULT_HUGGING_FACE_URL, HUGGING_FACE_URL_VARIABLE, HuggingFaceClient } from "../models/catalogue/HuggingFaceClient.js";
import { SettingsUnavailableError } from "../settings/settingsErrors.js";
import type { ModelPoolSettingsHost } from "../settings/ModelPoolSettingsHost.js";
import type { RequestLog } from "../http/RequestLog.js";
import type { PresetStore } from "../presets/PresetStore.js";
import { extractFileText } from "../attachments/extractFileText.js";
import type { RetrievalIndexes } from "../retrieval/RetrievalIndexes.js";
import type { MemoryRecord } from "../memoryRecord/MemoryRecord.js";
import type { McpManager } from "../mcp/McpManager.js";
import type { McpPermissionPrompts } from "../mcp/McpPermissionPrompts.js";
import type { LocalModels } from "../http/localModelEntries.js";
import { listLocalModels } from "../models/listLocalModels.js";

/** Who is calling: turns, cancels and an import in parts belong to their caller (a window, a WebSocket). */
export interface CallContext {
    readonly callerId: number;
    /** Aborts when the caller goes away (its window closed or reloaded, its socket closed). */
    readonly callerGone: AbortSignal;
}

/** A host's answer to each method it serves (contract/rpc/rpcSpec.ts, `serve: "host"`); the turn methods are the dispatcher's own. */
export type HostImplementations = {
    readonly [M in Exclude<HostMethod, TurnMethod>]: (params: RpcParams<M>, context: CallContext) => RpcResult<M> | Promise<RpcResult<M>>;
};

/** The settings as the RPC reaches them (host/settings/SettingsHost.ts; the desktop app's local API switch: main/settings/SettingsService.ts). */
export interface SettingsMethods {
    view(): AppSettingsView;
    setLocalApi(change: LocalApiChange): Promise<AppSettingsView>;
    planEngineSettings(change: RpcParams<"planEngineSettings">): Promise<EngineSettingsPlan>;
    applyEngineSettings(change: RpcParams<"applyEngineSettings">): Promise<AppliedEngineSettings>;
    createApiKey(id: string): Promise<CreatedApiKey>;
    revokeApiKey(id: string): Promise<AppSettingsView>;
    setBackend(change: RpcParams<"setBackend">): Promise<AppSettingsView>;
    removeBackend(name: string): Promise<AppSettingsView>;
}

export interface HostParts {
    /** Resolves once the engine is ready, or rejects with why it could not start. */
    readonly engine: () => Promise<EngineClient>;
    /** The model manager's methods (host/supervisor/modelMethods.ts), once the engine they switch is there. */
    readonly models: () => Promise<HostModels>;
    /** Resolves to the workspaces' store, or rejects with why there is none; store calls never wait for the engine. */
    readonly store?: () => Promise<WorkspaceStore>;
    /** The settings (host/settings/SettingsHost.ts); a host without them (a test's server) answers settings_unavailable. */
    readonly settings?: SettingsMethods;
    /** The desktop app's native Open dialog for a GGUF (main/appShell.ts); a host without a window answers dialog_unavailable. */
    readonly chooseModelFile?: () => Promise<RpcResult<"chooseModelFile">>;
    /** The model catalogue and Hugging Face search; by default over HF's API, or the URL in KVAULT_HUGGINGFACE_URL. */
    readonly catalogue?: ModelCatalogue;
    /** The remote backends (host/backends/); a host without any lists none. */
    readonly backends?: Backends;
    /** Kvault's own API (URL, key, model) for the leak probe, once it listens; undefined while it does not. */
    readonly ownApi?: () => OwnApi | undefined;
    /** The local API's request log (host/http/RequestLog.ts), when the API is served; `requestLog` answers empty otherwise. */
    readonly requestLog?: () => RequestLog | undefined;
    /** The saved presets (host/presets/PresetStore.ts); a host without a data folder answers store_unavailable. */
    readonly presets?: () => Promise<PresetStore>;
    /** Each workspace's retrieval index (host/retrieval/RetrievalIndexes.ts); a host without a data folder has none. */
    readonly retrieval?: RetrievalIndexes;
    /** The audit record on disk (host/memoryRecord/MemoryRecord.ts); a host without a data folder exports no event. */
    readonly memoryRecord?: MemoryRecord;
    /** The MCP tool servers of mcp.json and the tool calls waiting for the user's permission; a host without them lists none. */
    readonly mcp?: { readonly manager: McpManager; readonly prompts: McpPermissionPrompts };
    /** The local models besides the engine's (host/supervisor/EnginePool.ts); a host that runs one lists none to choose. */
    readonly localModels?: () => LocalModels | undefined;
    /** Their settings (host/settings/ModelPoolSettingsHost.ts); a host without a settings file answers settings_unavailable. */
    readonly modelPool?: Pick<ModelPoolSettingsHost, "view" | "set">;
}

/**
 * Every method a host answers itself, from its parts: the engine's info, the model manager, the
 * workspace store, the settings. Both hosts (Electron main, the headless server) serve these same
 * implementations through RpcDispatcher; a new host method is one entry here.
 */
export function hostMethods(parts: HostParts): HostImplementations {
    const store = parts.store ?? noWorkspaceStore;
    const retrieval = (): RetrievalIndexes => {
        if (parts.retrieval === undefined) {
            throw new StoreOpenError("This Kvault host keeps no retrieval indexes: it was started without a data folder.");
        }
        return parts.retrieval;
    };
    const settings = parts.settings ?? noSettings;
    const modelPool = (): Pick<ModelPoolSettingsHost, "view" | "set"> => {
        if (parts.modelPool === undefined) {
            throw new SettingsUnavailableError("This Kvault host keeps no settings: it was started without a data folder.");
        }
        return parts.modelPool;
    };
    const imports = new ImportStaging();
    const probes = new LeakProbes(parts.backends ?? new Backends([]), parts.ownApi ?? (() => undefined));
    const chatImports = new ImportStaging({ method: "importChat", what: "chat file", maxChars: workspaceLimits.maxChatImportChars });
    return {
        info: async () => (await parts.engine()).info,
        ...forwardModels(parts.models),
        loadWorkspaces: async () => (await store()).load(),
        importWorkspaces: async (params, { callerId, callerGone }) => {
            const opened = await store();
            const document = imports.add(callerId, params, callerGone);
            if (document === undefined) {
                return { done: false, numPartsReceived: params.part + 1 };
            }
            return { done: true, ...(await opened.importV1(document)) };
        },
        saveWorkspace: async ({ workspace }) => {
            await (await store()).saveWorkspace(workspace);
            return {};
        },
        removeWorkspace: async ({ workspace }) => {
            await (await store()).removeWorkspace(workspace);
            // Its retrieval index goes with it: no later workspace of that id finds its chunks.
            await parts.retrieval?.remove(workspace);
            return {};
        },
        selectWorkspace: async ({ workspace }) => {
            await (await store()).selectWorkspace(workspace);
            return {};
        },
        appendMessage: async ({ workspace, message }) => {
            await (await store()).appendMessage(workspace, message);
            return {};
        },
        dropLastAnswer: async ({ workspace, messageId }) => (await store()).dropLastAnswer(workspace, messageId),
        clearChat: async ({ workspace }) => {
            await (await store()).clearChat(workspace);
            parts.mcp?.manager.forgetChat(workspace);
            return {};
        },
        selectBranch: async ({ workspace, messageId }) => (await store()).selectBranch(workspace, messageId),
        deleteMessage: async ({ workspace, messageId }) => (await store()).deleteMessage(workspace, messageId),
        duplicateWorkspace: async ({ workspace, id, name }) => (await store()).duplicateWorkspace(workspace, id, name),
        importChat: async (params, { callerId, callerGone }) => {
            const opened = await store();
            const document = chatImports.add(callerId, params, callerGone);
            if (document === undefined) {
                return { done: false, numPartsReceived: params.part + 1 };
            }
            return { done: true, workspace: await opened.importChat(document, params.id) };
        },
        getSettings: () => settings.view(),
        setLocalApi: (change) => settings.setLocalApi(change),
        planEngineSettings: (change) => settings.planEngineSettings(change),
        applyEngineSettings: (change) => settings.applyEngineSettings(change),
        createApiKey: ({ id }) => settings.createApiKey(id),
        revokeApiKey: ({ id }) => settings.revokeApiKey(id),
        chooseModelFile: () => (parts.chooseModelFile ?? noModelFileDialog)(),
        ...catalogueMethods(parts),
        listBackends: async () => ({ backends: (await parts.backends?.views()) ?? [] }),
        listLocalModels: ({ loadedOnly }) => listLocalModels(parts.localModels?.(), loadedOnly),
        getModelPoolSettings: () => modelPool().view(),
        setModelPoolSettings: (change) => modelPool().set(change),
        measureRemote: async ({ workspace, messages, draft }) => {
            const meta = await (await store()).findMeta(workspace);
            if (meta?.backend === undefined) {
                throw new InvalidRequestError(
                    `The workspace ${workspace} runs on this computer${meta === undefined ? " (or is not kept)" : ""}: measure it with measure, not measureRemote.`
                );
            }
            const backend = (parts.backends ?? new Backends([])).get(meta.backend.name);
            return measureRemote(backend, meta.backend.model, workspace, messages, draft);
        },
        planLeakProbe: ({ target }) => probes.plan(target),
        runLeakProbe: ({ target }) => probes.run(target),
        requestLog: ({ limit }) => parts.requestLog?.()?.recent(limit ?? 100) ?? [],
        exportMemoryRecord: async () => ({ jsonl: (await parts.memoryRecord?.exportJsonl()) ?? "" }),
        setBackend: (change) => settings.setBackend(change),
        removeBackend: ({ name }) => settings.removeBackend(name),
        listMcpServers: () => parts.mcp?.manager.list() ?? { configPath: "", servers: [] },
        answerToolCall: ({ requestId, callId, permission }) => ({
            answered: parts.mcp?.prompts.answer(requestId, callId, permission) ?? false
        }),
        extractAttachment: ({ fileName, dataBase64 }) => extractFileText(fileName, Buffer.from(dataBase64, "base64")),
        retrievalStatus: ({ workspace }) => retrieval().status(workspace),
        setRetrieval: ({ workspace, enabled }) => retrieval().setEnabled(workspace, enabled),
        indexAttachment: ({ workspace, fileName, text }) => retrieval().add(workspace, fileName, text),
        retrieveChunks: ({ workspace, query, maxChunks }) => retrieval().search(workspace, query, maxChunks),
        ...presetMethods(
            parts.presets ??
                (() => Promise.reject(new StoreOpenError("This Kvault host keeps no presets: it was started without a data folder.")))
        )
    };
}

/** The preset methods; a presets file that could not be read is read again at the next call, so fixing it needs no restart. */
function presetMethods(
    open: () => Promise<PresetStore>
): Pick<HostImplementations, "listPresets" | "savePreset" | "deletePreset" | "importPresets"> {
    let opened: Promise<PresetStore> | undefined;
    const presets = (): Promise<PresetStore> => {
        opened ??= open();
        opened.catch(() => (opened = undefined));
        return opened;
    };
    return {
        listPresets: async () => (await presets()).list(),
        savePreset: async ({ preset }) => (await presets()).save(preset),
        deletePreset: async ({ id }) => (await presets()).remove(id),
        importPresets: async ({ text, fileName }) => (await presets()).import(text, fileName)
    };
}

/** The catalogue's methods: its verdicts count KV for the engine's window unless a context size is given. */
function catalogueMethods(parts: HostParts): Pick<HostImplementations, "modelCatalogue" | "searchModels" | "modelRepoFiles"> {
    const catalogue =
        parts.catalogue ??
        new ModelCatalogue({
            huggingFace: new HuggingFaceClient(process.env[HUGGING_FACE_URL_VARIABLE] ?? DEFAULT_HUGGING_FACE_URL),
            resourceUse: async () => (await parts.engine()).call("resourceUse", {}),
            libraryModels: async () => (await (await parts.models()).methods.listModels({}, libraryContext)).models
        });
    return {
        modelCatalogue: async ({ contextSize }) =>
            catalogue.view(
                contextSize ??
                    (await parts.engine().then(
                        (engine) => engine.info.window.limit,
                        () => DEFAULT_CATALOGUE_CONTEXT
                    ))
            ),
        searchModels: ({ query }) => catalogue.search(query),
        modelRepoFiles: ({ repo }) => catalogue.repoFiles(repo)
    };
}

/** The context a catalogue verdict counts when neither the caller nor an engine says, tokens. */
const DEFAULT_CATALOGUE_CONTEXT = 4_096;

/** The host's own call of listModels: no caller to go away. */
const libraryContext: CallContext = { callerId: -1, callerGone: new AbortController().signal };

/** Each model method, answered by the model manager once it is there. */
function forwardModels(models: () => Promise<HostModels>): Pick<HostImplementations, ModelMethodName> {
    return Object.fromEntries(
        modelMethodNames.map((name) => [
            name,
            async (params: unknown, context: CallContext) => ((await models()).methods[name] as Forwarded)(params, context)
        ])
    ) as unknown as Pick<HostImplementations, ModelMethodName>;
}

type Forwarded = (params: unknown, context: CallContext) => unknown;

/** The store of a host that keeps no chats (a test's server): every store call fails with store_unavailable. */
export function noWorkspaceStore(): Promise<WorkspaceStore> {
    return Promise.reject(new StoreOpenError("This Kvault host keeps no workspaces: it was started without a data folder."));
}

export { SettingsUnavailableError } from "../settings/settingsErrors.js";

/** A host started without settings (a test's server): every settings method answers settings_unavailable. */
const noSettings: SettingsMethods = {
    view: () => {
        throw unavailable();
    },
    setLocalApi: () => Promise.reject(unavailable()),
    planEngineSettings: () => Promise.reject(unavailable()),
    applyEngineSettings: () => Promise.reject(unavailable()),
    createApiKey: () => Promise.reject(unavailable()),
    revokeApiKey: () => Promise.reject(unavailable()),
    setBackend: () => Promise.reject(unavailable()),
    removeBackend: () => Promise.reject(unavailable())
};

function unavailable(): SettingsUnavailableError {
    return new SettingsUnavailableError(
        "This Kvault host was started without settings (no data directory): change its engine with its options, and restart it."
    );
}

/** A host without a window (the headless server) was asked for the native file dialog. */
export class DialogUnavailableError extends KvaultError {
    readonly code = "dialog_unavailable";
}

function noModelFileDialog(): Promise<never> {
    return Promise.reject(
        new DialogUnavailableError(
            "This Kvault runs headless (npm run serve): it has no window to show a file dialog in. Type the model's full path in the model panel, then Inspect."
        )
    );
}
