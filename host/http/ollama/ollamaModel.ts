import crypto from "node:crypto";
import fs from "node:fs/promises";
import type { EngineInfo } from "../../../contract/engineProtocol.js";

/** The Ollama API version whose shapes these endpoints follow (the official client's, which the tests drive). */
export const OLLAMA_API_VERSION = "0.6.4";

/** Ollama names carry a tag; the model this server runs answers to its id alone and with `:latest`. */
export function isServedName(name: string, modelId: string): boolean {
    return name === modelId || name === `${modelId}:latest`;
}

/** What /api/tags, /api/ps and /api/show say of the loaded model: Ollama's model entry, from the engine's info and the file. */
export async function ollamaModelEntry(modelId: string, info: EngineInfo): Promise<Record<string, unknown>> {
    const stats = await fs.stat(info.modelPath).catch(() => undefined);
    return {
        name: modelId,
        model: modelId,
        modified_at: (stats?.mtime ?? new Date(0)).toISOString(),
        size: stats?.size ?? 0,
        // not a blob's sha256 as Ollama's are: Kvault keeps no blobs; the same file gives the same digest
        digest: crypto
            .createHash("sha256")
            .update(`${info.modelPath}:${stats?.size ?? 0}:${stats?.mtimeMs ?? 0}`)
            .digest("hex"),
        details: { parent_model: "", format: "gguf", family: "", families: [], parameter_size: "", quantization_level: "" }
    };
}

/** `/api/show`'s answer: the entry's details, and in `model_info` the window and the embedding width a client sizes itself by. */
export async function ollamaShowBody(modelId: string, info: EngineInfo): Promise<Record<string, unknown>> {
    const entry = await ollamaModelEntry(modelId, info);
    return {
        license: "",
        modelfile: "",
        parameters: "",
        template: "",
        system: "",
        details: entry.details,
        messages: [],
        modified_at: entry.modified_at,
        model_info: {
            "general.name": info.modelName,
            "kvault.context_length": info.window.limit,
            "kvault.embedding_length": info.embeddingDimensions
        },
        capabilities: ["completion", "embedding"]
    };
}
