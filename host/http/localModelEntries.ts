// What the API lists of the models beside the server's own (host/supervisor/EnginePool.ts): their
// `/v1/models` entries, Ollama's `/api/ps` and `/api/tags` rows, and the `/metrics` lines that
// show each loaded model's contexts and pages under a `model` label.
import type { ModelFacts } from "../../contract/models.js";
import type { DiskModel } from "../models/findModelsOnDisk.js";
import type { LoadedModel } from "../supervisor/EnginePool.js";
import { ollamaModelEntry } from "./ollama/ollamaModel.js";
import { describeServedModel } from "./servedModelEntry.js";

/** The pool as the listings read it. */
export interface LocalModels {
    /** The server's own model first, then each loaded one. */
    loaded(): Promise<LoadedModel[]>;
    /** Every model found on disk, loaded or not. */
    available(): Promise<readonly DiskModel[]>;
}

/** `/v1/models` entries of the models found on disk: a loaded one's as the server's own is described, the rest by their file. */
export async function diskModelEntries(
    models: LocalModels,
    modelFacts: ((modelPath: string) => Promise<ModelFacts>) | undefined
): Promise<Record<string, unknown>[]> {
    const loaded = new Map((await models.loaded()).filter((model) => !model.primary).map((model) => [model.id, model]));
    const primaryId = (await models.loaded())[0]?.id;
    const entries: Record<string, unknown>[] = [];
    for (const model of await models.available()) {
        if (model.id === primaryId) {
            continue;
        }
        const running = loaded.get(model.id);
        const found = { loaded: running !== undefined, source: model.source, path: model.path, file_bytes: model.identity.size };
        if (running === undefined) {
            entries.push({ id: model.id, object: "model", created: 0, owned_by: "kvault", kvault: found });
            continue;
        }
        const entry = await describeServedModel(model.id, running.engine.info, modelFacts);
        entries.push({ ...entry, kvault: { ...(entry.kvault as Record<string, unknown> | undefined), ...found } });
    }
    return entries;
}

/** Ollama's `/api/ps` rows of the pool's loaded models (not the server's own): `size` their planned memory, `expires_at` their idle deadline. */
export async function ollamaLoadedEntries(
    models: LocalModels,
    modelFacts: ((modelPath: string) => Promise<ModelFacts>) | undefined
): Promise<Record<string, unknown>[]> {
    const rows: Record<string, unknown>[] = [];
    for (const model of await models.loaded()) {
        if (model.primary) {
            continue;
        }
        const entry = await ollamaModelEntry(model.id, model.engine.info, modelFacts);
        const { layers } = model.engine.info.compute;
        rows.push({
            ...entry,
            size: model.plannedBytes,
            size_vram: layers.numTotal === 0 ? 0 : Math.round((model.plannedBytes * layers.numOnDevice) / layers.numTotal),
            // in use now: it stays at least until the request ends, then its idle time runs
            expires_at: new Date(model.expiresAt ?? Date.now()).toISOString()
        });
    }
    return rows;
}

/** Ollama's `/api/tags` rows of the models found on disk and not loaded (a loaded one is listed by its engine). */
export async function ollamaDiskEntries(models: LocalModels): Promise<Record<string, unknown>[]> {
    const loaded = new Set((await models.loaded()).map((model) => model.id));
    return (await models.available())
        .filter((model) => !loaded.has(model.id))
        .map((model) => ({
            name: model.id,
            model: model.id,
            modified_at: new Date(model.identity.mtimeMs).toISOString(),
            size: model.identity.size,
            digest: "",
            details: { parent_model: "", format: "gguf", family: "", families: [], parameter_size: "", quantization_level: "" }
        }));
}

/** `/metrics` lines for every loaded model, the server's own included: its planned memory, workspaces and pages in use, by `model`. */
export async function loadedModelMetrics(models: LocalModels): Promise<string> {
    const lines = [
        "# HELP kvault_loaded_model_planned_bytes The memory planned for each loaded model (weights, KV of each context, page pool, compute).",
        "# TYPE kvault_loaded_model_planned_bytes gauge"
    ];
    const contexts = [
        "# HELP kvault_loaded_model_workspaces Workspaces each loaded model holds KV for.",
        "# TYPE kvault_loaded_model_workspaces gauge"
    ];
    const pages = [
        "# HELP kvault_loaded_model_pages_used KV pages each loaded model's pool has in use.",
        "# TYPE kvault_loaded_model_pages_used gauge"
    ];
    for (const model of await models.loaded()) {
        const label = `{model="${model.id.replace(/["\\\n]/g, "_")}",primary="${model.primary}"}`;
        lines.push(`kvault_loaded_model_planned_bytes${label} ${model.plannedBytes}`);
        const snapshot = await model.engine.call("snapshot", {}).catch(() => undefined);
        if (snapshot !== undefined) {
            const free = snapshot.pageMap.numPagesByState.free ?? 0;
            const total = Object.values(snapshot.pageMap.numPagesByState).reduce((sum, count) => sum + count, 0);
            contexts.push(`kvault_loaded_model_workspaces${label} ${snapshot.workspaces.length}`);
            pages.push(`kvault_loaded_model_pages_used${label} ${total - free}`);
        }
    }
    return `${[...lines, ...contexts, ...pages].join("\n")}\n`;
}
