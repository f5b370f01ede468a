// Where a chat's turn runs: on this computer's engine, or on the backend its workspace names
// (WorkspaceMeta.backend). The host's turn runner (host/rpc/HostTurns.ts) asks this once per turn,
// of the backends in force then (the settings screen may have added or removed one since).
import type { ChatTurnRequest, EngineClient, EngineInfo } from "../../contract/engineProtocol.js";
import type { WorkspaceMeta } from "../../contract/workspaces.js";
import type { Backends } from "./Backends.js";
import { BackendNotFoundError } from "./backendErrors.js";
import { ModelNotFoundError } from "../models/modelErrors.js";
import type { ModelRouter } from "../http/routeModelRequests.js";

/** What runs a turn: the engine, or a backend's model; `info`, where known, names the model that answered (kept on the answer, contract/workspaces.ts's `model`). */
export type TurnRunner = Pick<EngineClient, "chat"> & { readonly info?: Pick<EngineInfo, "modelName"> };

/** A workspace's stored entry, or undefined when the store has none by that id (a turn of the API or a test). */
export type FindWorkspace = (id: string) => Promise<WorkspaceMeta | undefined>;

export function routeTurns(
    engine: () => Promise<EngineClient>,
    findWorkspace: FindWorkspace,
    backends: Backends,
    /** The local models besides the host's own (host/supervisor/EnginePool.ts); absent in a host that runs one. */
    localModels?: () => ModelRouter | undefined
): (request: ChatTurnRequest) => Promise<TurnRunner> {
    return async (request) => {
        const meta = await findWorkspace(request.workspace);
        const chosen = meta?.backend;
        if (chosen === undefined && meta?.localModel !== undefined) {
            return localModelRunner(meta, meta.localModel, localModels?.());
        }
        if (chosen === undefined) {
            const local = await engine();
            // the workspace's setting, read where the store is: the engine keeps its KV on disk for this turn's workspace
            return meta?.settings.keepKvOnDisk === true
                ? { info: local.info, chat: (turn, listener, signal) => local.chat({ ...turn, keepKvOnDisk: true }, listener, signal) }
                : local;
        }
        let backend;
        try {
            backend = backends.get(chosen.name);
        } catch (error) {
            throw new BackendNotFoundError(
                `The workspace "${meta!.name}" runs on backend "${chosen.name}" (${chosen.model}), which this Kvault does not have now: it was not started with it, or it was removed in the settings. Add it again in Settings › Remote backends (or start the server with --backend ${chosen.name}=URL), or make a workspace on this computer.`,
                { cause: error }
            );
        }
        return {
            info: { modelName: chosen.model },
            chat: (turn, listener, signal) => backend.chat(chosen.model, turn, listener, signal)
        };
    };
}

/** The router that serves a workspace's own local model; model_not_found, naming the workspace, when none does. */
export async function localModelRouter(meta: WorkspaceMeta, model: string, router: ModelRouter | undefined): Promise<ModelRouter> {
    if (router === undefined || !(await router.has(model))) {
        throw new ModelNotFoundError(
            `The workspace "${meta.name}" runs on the local model "${model}", which ${router === undefined ? "this host cannot load (it runs one model)" : "is not found on this disk now"}. Put the file back where its app keeps it (GET /v1/models lists what is found), or choose another model for the workspace.`
        );
    }
    return router;
}

/** A workspace's own local model: loaded (or held) for each turn, released when the turn ends; refused, naming the workspace, when not found. */
async function localModelRunner(meta: WorkspaceMeta, model: string, found: ModelRouter | undefined): Promise<TurnRunner> {
    const router = await localModelRouter(meta, model, found);
    let info: EngineInfo | undefined;
    return {
        // the engine that answered, known once its lease is taken
        get info() {
            return info;
        },
        chat: async (turn, listener, signal) => {
            const lease = await router.acquire(model);
            info = lease.engine.info;
            try {
                return await lease.engine.chat(
                    meta.settings.keepKvOnDisk === true ? { ...turn, keepKvOnDisk: true } : turn,
                    listener,
                    signal
                );
            } finally {
                lease.release();
            }
        }
    };
}
