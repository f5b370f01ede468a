import type { EngineClient } from "../../contract/engineProtocol.js";
import type { AppSettingsView, LocalApiChange } from "../../contract/KvaultBridge.js";
import type { HostMethod, RpcParams, RpcResult, TurnMethod } from "../../contract/rpc.js";
import type { WorkspaceStore } from "../store/WorkspaceStore.js";
import { StoreOpenError } from "../store/storeErrors.js";
import { modelMethodNames, type HostModels, type ModelMethodName } from "../supervisor/modelMethods.js";
import { ImportStaging } from "./ImportStaging.js";
import { workspaceLimits } from "../../contract/workspaces.js";
import { KvaultError } from "../../engine/index.js";
import type { RequestLog } from "../http/RequestLog.js";

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

/** The desktop app's settings as the RPC reaches them (main/settings/SettingsService.ts). */
export interface SettingsMethods {
    view(): AppSettingsView;
    setLocalApi(change: LocalApiChange): Promise<AppSettingsView>;
}

export interface HostParts {
    /** Resolves once the engine is ready, or rejects with why it could not start. */
    readonly engine: () => Promise<EngineClient>;
    /** The model manager's methods (host/supervisor/modelMethods.ts), once the engine they switch is there. */
    readonly models: () => Promise<HostModels>;
    /** Resolves to the workspaces' store, or rejects with why there is none; store calls never wait for the engine. */
    readonly store?: () => Promise<WorkspaceStore>;
    /** The desktop app's settings; a host without them (headless) answers settings_unavailable. */
    readonly settings?: SettingsMethods;
    /** The desktop app's native Open dialog for a GGUF (main/appShell.ts); a host without a window answers dialog_unavailable. */
    readonly chooseModelFile?: () => Promise<RpcResult<"chooseModelFile">>;
    /** The local API's request log (host/http/RequestLog.ts), when the API is served; `requestLog` answers empty otherwise. */
    readonly requestLog?: () => RequestLog | undefined;
}

/**
 * Every method a host answers itself, from its parts: the engine's info, the model manager, the
 * workspace store, the settings. Both hosts (Electron main, the headless server) serve these same
 * implementations through RpcDispatcher; a new host method is one entry here.
 */
export function hostMethods(parts: HostParts): HostImplementations {
    const store = parts.store ?? noWorkspaceStore;
    const settings = parts.settings ?? headlessSettings;
    const imports = new ImportStaging();
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
        chooseModelFile: () => (parts.chooseModelFile ?? noModelFileDialog)(),
        requestLog: ({ limit }) => parts.requestLog?.()?.recent(limit ?? 100) ?? []
    };
}

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

/** A host without the desktop app's settings (the headless server) was asked for them. */
export class SettingsUnavailableError extends KvaultError {
    readonly code = "settings_unavailable";
}

/**
 * The headless server's settings: its command-line options, and the API is the server itself, so
 * there is nothing to show or switch from the page (and the page never gets a key through it).
 */
const headlessSettings: SettingsMethods = {
    view: () => {
        throw new SettingsUnavailableError(
            "This Kvault runs headless (npm run serve): it has no settings screen. Its settings are its command-line options (npm run serve -- --help), and its API is this server itself."
        );
    },
    setLocalApi: () =>
        Promise.reject(
            new SettingsUnavailableError(
                "This Kvault runs headless (npm run serve): its API is this server itself, started with its options. Restart it with other options (npm run serve -- --help) to change them."
            )
        )
};

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
