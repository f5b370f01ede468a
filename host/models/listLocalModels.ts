// What a workspace's model picker offers (rpcSpec listLocalModels): the host's own model, then the
// models found on disk that the pool (host/supervisor/EnginePool.ts) can load beside it.
import type { LocalModelChoice, LocalModelList } from "../../contract/models.js";
import type { LocalModels } from "../http/localModelEntries.js";

/** The host's own model is listed under this source. */
export const OWN_MODEL_SOURCE = "own";

/**
 * `loadedOnly` lists the loaded models alone, from the pool's own entries: a view that polls what
 * is loaded must not make the pool rescan the model folders (available() does when its scan is stale).
 */
export async function listLocalModels(pool: LocalModels | undefined, loadedOnly = false): Promise<LocalModelList> {
    if (pool === undefined) {
        return { several: false, models: [] };
    }
    const loaded = await pool.loaded();
    if (loadedOnly) {
        return { several: true, models: loaded.map((model) => ({ id: model.id, source: model.source, loaded: true })) };
    }
    const own = loaded.find((model) => model.primary);
    const loadedIds = new Set(loaded.map((model) => model.id));
    const found: LocalModelChoice[] = (await pool.available())
        .filter((model) => model.id !== own?.id)
        .map((model) => ({ id: model.id, source: model.source, loaded: loadedIds.has(model.id) }));
    return {
        several: true,
        models: [...(own === undefined ? [] : [{ id: own.id, source: OWN_MODEL_SOURCE, loaded: true }]), ...found]
    };
}
