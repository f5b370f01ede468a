import crypto from "node:crypto";
import fs from "node:fs/promises";
import type { EngineInfo } from "../../../contract/engineProtocol.js";
import type { ModelFacts } from "../../../contract/models.js";

/** The Ollama API version whose shapes these endpoints follow (the official client's, which the tests drive). */
export const OLLAMA_API_VERSION = "0.6.4";

/** Ollama names carry a tag; the model this server runs answers to its id alone and with `:latest`. */
export function isServedName(name: string, modelId: string): boolean {
    return name === modelId || name === `${modelId}:latest`;
}

/**
 * What /api/tags, /api/ps and /api/show say of the loaded model: Ollama's model entry, from the
 * engine's info and the file; `details` from the file's facts (its header) when the server has
 * them, empty strings where it does not (a failed read is no reason to fail a listing).
 */
export async function ollamaModelEntry(
    modelId: string,
    info: EngineInfo,
    modelFacts?: (modelPath: string) => Promise<ModelFacts>
): Promise<Record<string, unknown>> {
    const stats = await fs.stat(info.modelPath).catch(() => undefined);
    const facts = await modelFacts?.(info.modelPath).catch(() => undefined);
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
        details: {
            parent_model: "",
            format: "gguf",
            family: facts?.architecture ?? "",
            families: facts === undefined ? [] : [facts.architecture],
            parameter_size: facts?.parameterCount === undefined ? "" : parameterSize(facts.parameterCount),
            quantization_level: facts?.fileType === undefined ? "" : quantizationLevel(facts.fileType)
        }
    };
}

/** Ollama's `parameter_size`: "7.6B", "135.0M", one decimal, as `ollama list` shows it. */
export function parameterSize(numParameters: number): string {
    if (numParameters >= 1e9) {
        return `${(numParameters / 1e9).toFixed(1)}B`;
    }
    if (numParameters >= 1e6) {
        return `${(numParameters / 1e6).toFixed(1)}M`;
    }
    return `${(numParameters / 1e3).toFixed(1)}K`;
}

/** Ollama's `quantization_level` ("Q4_K_M", "F16") from the GGUF's file type ("MOSTLY_Q4_K_M", "ALL_F32"). */
export function quantizationLevel(fileType: string): string {
    return fileType.replace(/^(MOSTLY|ALL)_/, "");
}

/** `/api/show`'s answer: the entry's details, and in `model_info` the window and the embedding width a client sizes itself by. */
export async function ollamaShowBody(
    modelId: string,
    info: EngineInfo,
    modelFacts?: (modelPath: string) => Promise<ModelFacts>
): Promise<Record<string, unknown>> {
    const entry = await ollamaModelEntry(modelId, info, modelFacts);
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
