// Where an engine method runs when a host runs several local models (host/supervisor/EnginePool.ts):
// a workspace's measure on the engine of the model it chose (WorkspaceMeta.localModel), as its turns
// do (routeTurns.ts); forgetting a workspace on every loaded model's engine, so that its KV is freed
// and scrubbed wherever it ran; the page map, the audit, the canary and the drills on the loaded model
// and the memory timeline on the loaded model their `model` names, the host's own by default. Every other call goes to the host's own engine.
import type { EngineClient } from "../../contract/engineProtocol.js";
import type { EngineMethod, RpcParams, RpcResult } from "../../contract/rpc.js";
import type { LocalModels } from "../http/localModelEntries.js";
import type { ModelRouter } from "../http/routeModelRequests.js";
import { ModelNotLoadedError } from "../supervisor/engineHostErrors.js";
import { localModelRouter, type FindWorkspace } from "./routeTurns.js";

/** An engine call as RpcDispatcher hands it on. */
export type EngineCaller = <M extends EngineMethod>(method: M, params: RpcParams<M>) => Promise<RpcResult<M>>;

/** The engine methods that measure one workspace's conversation with its model. */
const WORKSPACE_MEASURES: ReadonlySet<EngineMethod> = new Set<EngineMethod>(["measure"]);

/** The engine methods that take a loaded model's id; their reports name it. */
const PER_MODEL: ReadonlySet<EngineMethod> = new Set<EngineMethod>(["snapshot", "memoryEvents", "audit", "runDrill", "runCanary"]);
const NAMED_REPORTS: ReadonlySet<EngineMethod> = new Set<EngineMethod>(["audit", "runDrill", "runCanary"]);

export function routeEngineCalls(
    engine: () => Promise<EngineClient>,
    findWorkspace: FindWorkspace,
    /** The local models besides the host's own (host/supervisor/EnginePool.ts); absent in a host that runs one. */
    localModels?: () => (ModelRouter & LocalModels) | undefined
): EngineCaller {
    const forgetEverywhere = async (params: RpcParams<"forgetWorkspace">): Promise<RpcResult<"forgetWorkspace">> => {
        const own = await (await engine()).call("forgetWorkspace", params);
        const others = (await localModels?.()?.loaded())?.filter((model) => !model.primary) ?? [];
        // Each loaded model's engine may hold pages of the workspace; one that is not loaded holds none.
        await Promise.all(others.map((model) => model.engine.call("forgetWorkspace", params)));
        return own;
    };
    const onModel = async <M extends EngineMethod>(method: M, params: RpcParams<M>): Promise<RpcResult<M>> => {
        const { model, ...rest } = params as RpcParams<M> & { readonly model?: string };
        const pool = localModels?.();
        const loaded = (await pool?.loaded()) ?? [];
        const primaryId = loaded[0]?.id;
        const named = (result: RpcResult<M>): RpcResult<M> =>
            NAMED_REPORTS.has(method) && primaryId !== undefined
                ? ({ ...(result as object), model: model ?? primaryId } as RpcResult<M>)
                : result;
        if (model === undefined || model === primaryId) {
            return named(await (await engine()).call(method, rest as RpcParams<M>));
        }
        if (pool === undefined || !loaded.some((entry) => entry.id === model)) {
            const names = loaded.map((entry) => `"${entry.id}"`).join(", ");
            throw new ModelNotLoadedError(
                `The model "${model.slice(0, 200)}" is not loaded${pool === undefined ? ": this host runs one model" : ` now; loaded: ${names}`}. Run a workspace's turn on it to load it, or choose a loaded one.`
            );
        }
        // Held for the call, so that its idle time does not unload it under an audit or a canary.
        const lease = await pool.acquire(model);
        try {
            return named(await lease.engine.call(method, rest as RpcParams<M>));
        } finally {
            lease.release();
        }
    };
    return async (method, params) => {
        if (method === "forgetWorkspace") {
            return forgetEverywhere(params as RpcParams<"forgetWorkspace">) as Promise<RpcResult<typeof method>>;
        }
        if (PER_MODEL.has(method)) {
            return onModel(method, params);
        }
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
