import { readGgufFileInfo } from "node-llama-cpp";
import type { KvHeadGeometry } from "../codec/kvCacheTypes.js";

/** A metadata number, or the first non-zero entry of a per-layer array (head counts may be given per layer). */
function numberOf(value: unknown): number | undefined {
    if (typeof value === "number" && Number.isFinite(value)) {
        return value;
    }
    if (Array.isArray(value)) {
        return value.map(numberOf).find((entry) => entry !== undefined && entry > 0);
    }
    return undefined;
}

/**
 * The widths of the model's K and V heads, as llama.cpp derives them (src/llama-model.cpp):
 * `<arch>.attention.key_length` and `value_length` where the file has them, else
 * `embedding_length / head_count`. Reads the header only (node-llama-cpp's bounded reader), so a
 * KV cache type the model cannot take is refused before anything is loaded. Undefined when the
 * header gives neither.
 */
export async function readKvHeadGeometry(modelPath: string): Promise<KvHeadGeometry | undefined> {
    const fileInfo = await readGgufFileInfo(modelPath, { readTensorInfo: false, logWarnings: false, sourceType: "filesystem" });
    const architecture = fileInfo.metadata.general?.architecture;
    if (architecture === undefined) {
        return undefined;
    }
    const metadata = (fileInfo.metadata as unknown as Record<string, Record<string, unknown> | undefined>)[architecture];
    const attention = metadata?.attention as Record<string, unknown> | undefined;
    const embeddingLength = numberOf(metadata?.embedding_length);
    const headCount = numberOf(attention?.head_count);
    const defaultHeadSize = embeddingLength !== undefined && headCount !== undefined ? embeddingLength / headCount : undefined;
    const kHeadSize = numberOf(attention?.key_length) ?? defaultHeadSize;
    const vHeadSize = numberOf(attention?.value_length) ?? defaultHeadSize;
    if (kHeadSize === undefined || vHeadSize === undefined) {
        return undefined;
    }
    return { architecture, kHeadSize, vHeadSize };
}
