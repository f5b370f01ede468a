// Where an engine method about one workspace runs: on the engine of the local model that workspace
// chose (WorkspaceMeta.localModel), as its turns do (routeTurns.ts), so that its meter counts with
// that model's tokenizer and window; every other call goes to the host's own engine.
import type { EngineClient } from "../../contract/engineProtocol.js";
import type { EngineMethod, RpcParams, RpcResult } from "../../contract/rpc.js";
import type { ModelRouter } from "../http/routeModelRequests.js";
import { localModelRouter, type FindWorkspace } from "./routeTurns.js";

/** An engine call as RpcDispatcher hands it on. */
export type EngineCaller = <M extends EngineMethod>(method: M, params: RpcParams<M>) => Promise<RpcResult<M>>;

/** The engine methods that measure one workspace's conversation with its model. */
const WORKSPACE_MEASURES: ReadonlySet<EngineMethod> = new Set<EngineMethod>(["measure"]);

export function routeEngineCalls(
    engine: () => Promise<EngineClient>,
    findWorkspace: FindWorkspace,
    /** The local models besides the host's own (host/supervisor/EnginePool.ts); absent in a host that runs one. */
    localModels?: () => ModelRouter | undefined
): EngineCaller {
    return async (method, params) => {
        const workspace = WORKSPACE_MEASURES.has(method) ? (params as { readonly workspace?: unknown }).workspace : undefined;
        const meta = typeof workspace === "string" ? await findWorkspace(workspace) : undefined;
        if (meta === undefined || meta.backend !== undefined || meta.localModel === undefined) {
            return (await engine()).call(method, params);
        }
        const router = await localModelRouter(meta, meta.localModel, localModels?.());
        // Held for the call, as a turn holds it: loaded if it is not, and not unloaded while it counts.
        const lease = await router.acquire(meta.localModel);
        try {
            return await lease.engine.call(method, params);
        } finally {
            lease.release();
        }
    };
}
