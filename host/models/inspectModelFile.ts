import os from "node:os";
import path from "node:path";
import { getLlama, GgufFileType, GgufInsights, LlamaLogLevel, readGgufFileInfo, type GgufFileInfo, type Llama } from "node-llama-cpp";
import { kvCacheTypes, type KvCacheType, type ModelFacts, type ModelMemoryEstimate } from "../../contract/models.js";
import { describeInsightsMemory, kvRowBytes } from "../../engine/index.js";
import { ggufSplitParts } from "./gguf/ggufSplitParts.js";
import { readGgufHeader } from "../../gguf/index.js";
import { ModelUnreadableError, ModelUnsupportedError } from "./modelErrors.js";

export interface InspectModelOptions {
    /** The context the estimate is for (tokens per sequence). */
    readonly contextSize?: number;
    readonly sequences?: number;
    /** A loaded binding to reuse; by default a CPU one is started once per process and kept. */
    readonly llama?: Llama;
}

export const inspectDefaults = { contextSize: 4096, sequences: 1 } as const;

let sharedLlama: Promise<Llama> | undefined;

/** The CPU binding inspection uses: reading a header needs no GPU, and it loads no model. */
function inspectionLlama(): Promise<Llama> {
    sharedLlama ??= getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false }).catch((error: unknown) => {
        sharedLlama = undefined;
        throw error;
    });
    return sharedLlama;
}

/**
 * Reads a GGUF file's header (not its weights) and says what the model is and what loading it
 * would take. Throws model_unreadable, model_not_gguf or model_unsupported with what to do.
 * In this process: hosts inspect through inspectModelInChild, which runs this in a child with a
 * memory limit and a deadline.
 */
export async function inspectModelFile(modelPath: string, options: InspectModelOptions = {}): Promise<ModelFacts> {
    const { contextSize = inspectDefaults.contextSize, sequences = inspectDefaults.sequences } = options;
    // Kvault's bounded reader first: node-llama-cpp's trusts the counts in the file, and one that
    // lies would end or pin this process. Past it, every count and length fits the file.
    // A split model's parts are all read below, so all are checked here, one at a time.
    const fileBytes = readGgufHeader(modelPath).fileBytes;
    for (const part of ggufSplitParts(modelPath).filter((other) => other !== modelPath)) {
        readGgufHeader(part);
    }
    let fileInfo: GgufFileInfo;
    try {
        // "filesystem": a path that looks like a URL or an hf: reference is still a path, never a download.
        fileInfo = await readGgufFileInfo(modelPath, { readTensorInfo: true, logWarnings: false, sourceType: "filesystem" });
    } catch (error) {
        throw new ModelUnreadableError(
            `${modelPath} starts like a GGUF file, but its header could not be read (${(error as Error).message}); ` +
                "the file is probably truncated or damaged. Download or copy it again.",
            { cause: error }
        );
    }
    // node-llama-cpp reads past the end of a cut-short file as zeros rather than failing.
    const lastTensorOffset = Math.max(0, ...(fileInfo.tensorInfo ?? []).map((tensor) => Number(tensor.fileOffset)));
    const infoEndOffset = fileInfo.infoEndOffset ?? 0;
    if (infoEndOffset > fileBytes || lastTensorOffset >= fileBytes) {
        throw new ModelUnreadableError(
            `${modelPath} starts like a GGUF file, but its header could not be read (it has ${fileBytes.toLocaleString("en-US")} bytes; ` +
                `its header and tensors need more than ${Math.max(infoEndOffset, lastTensorOffset).toLocaleString("en-US")}): ` +
                "the file is probably truncated or damaged. Download or copy it again."
        );
    }
    const metadata = fileInfo.metadata as unknown as {
        general?: { architecture?: string; name?: string; file_type?: number };
        tokenizer?: { ggml?: { model?: string; tokens?: readonly unknown[] } };
    };
    const architecture = metadata.general?.architecture;
    if (architecture === undefined || architecture === "") {
        throw new ModelUnsupportedError(
            `${modelPath} is a GGUF file without general.architecture, so it is not a model llama.cpp can load. Open a text-generation model's .gguf file.`
        );
    }
    const tokens = metadata.tokenizer?.ggml?.tokens;
    if (metadata.tokenizer?.ggml?.model === undefined || tokens === undefined || tokens.length === 0) {
        throw new ModelUnsupportedError(
            `${modelPath} (${architecture}) has no tokenizer, so it cannot chat (it may be a vision projector, a LoRA adapter or a part of a split model). Open a text-generation model's .gguf file.`
        );
    }

    const llama = options.llama ?? (await inspectionLlama());
    const insights = await GgufInsights.from(fileInfo, llama);
    if (!insights.isSupportedByLlamaCpp) {
        throw new ModelUnsupportedError(
            `${modelPath} uses the architecture "${architecture}", which this build of llama.cpp does not support. Open a model of another architecture, or update Kvault.`
        );
    }
    if (!insights.hasDecoder || insights.hasEncoder) {
        throw new ModelUnsupportedError(
            `${modelPath} (${architecture}) is not a decoder-only text-generation model. Open a chat model's .gguf file.`
        );
    }

    // node-llama-cpp's totalLayers counts the output layer too (block_count + 1); KV is kept per block
    const blockCount = (fileInfo.architectureMetadata as { block_count?: number } | undefined)?.block_count;
    const numLayers = typeof blockCount === "number" && blockCount > 0 ? blockCount : Math.max(1, insights.totalLayers - 1);
    const kvBytesPerTokenByType = computeKvBytesPerToken(fileInfo, numLayers);
    const kvBytesPerToken = kvBytesPerTokenByType.f16!;
    const fileType = metadata.general?.file_type;
    let parameterCount: number | undefined;
    try {
        parameterCount = insights.totalParameters > 0 ? insights.totalParameters : undefined;
    } catch {
        parameterCount = undefined;
    }
    return {
        path: modelPath,
        fileName: path.basename(modelPath),
        fileBytes,
        name: metadata.general?.name,
        architecture,
        parameterCount,
        fileType: fileType === undefined ? undefined : ((GgufFileType[fileType] as string | undefined) ?? `file type ${fileType}`),
        trainContextSize: insights.trainContextSize,
        numLayers,
        kvBytesPerToken,
        kvBytesPerTokenByType,
        heads: readHeads(fileInfo),
        slidingWindow: insights.swaSize,
        machineRamBytes: os.totalmem(),
        memory: describeInsightsMemory(insights),
        estimate: await estimate(insights, kvBytesPerToken, contextSize, sequences)
    };
}

interface AttentionMetadata {
    embedding_length?: number;
    attention?: { head_count?: number | number[]; head_count_kv?: number | number[]; key_length?: number; value_length?: number };
}

const headsAt = (value: number | number[] | undefined, layer: number): number | undefined => (Array.isArray(value) ? value[layer] : value);

/** One layer's heads as llama.cpp derives them: KV heads default to the Q heads, head widths to embedding / heads. */
function layerHeads(
    arch: AttentionMetadata,
    layer: number
): { numHeads: number; numKvHeads: number; kHeadSize: number; vHeadSize: number } {
    const attention = arch.attention ?? {};
    const numHeads = headsAt(attention.head_count, layer) ?? 0;
    const numKvHeads = headsAt(attention.head_count_kv, layer) ?? numHeads;
    const headDim = numHeads > 0 ? (arch.embedding_length ?? 0) / numHeads : 0;
    return { numHeads, numKvHeads, kHeadSize: attention.key_length ?? headDim, vHeadSize: attention.value_length ?? headDim };
}

function readHeads(fileInfo: GgufFileInfo): ModelFacts["heads"] {
    const heads = layerHeads((fileInfo.architectureMetadata ?? {}) as AttentionMetadata, 0);
    return heads.numHeads > 0 ? heads : undefined;
}

/**
 * Per KV cache type: layers × the K and V rows of one token (n_embd_k_gqa and n_embd_v_gqa
 * values, per-layer head counts summed where the file gives a list), in F16 2 bytes a value, in
 * Q8_0 and Q4_0 whole 32-value blocks of a head; undefined for a type whose blocks a head does not fill.
 */
function computeKvBytesPerToken(fileInfo: GgufFileInfo, numLayers: number): Record<KvCacheType, number | undefined> {
    const arch = (fileInfo.architectureMetadata ?? {}) as AttentionMetadata;
    const byType = (type: KvCacheType): number | undefined => {
        let bytes = 0;
        for (let layer = 0; layer < numLayers; layer++) {
            const { numKvHeads, kHeadSize, vHeadSize } = layerHeads(arch, layer);
            const k = kvRowBytes(type, kHeadSize);
            const v = kvRowBytes(type, vHeadSize);
            if (k === undefined || v === undefined) {
                return undefined;
            }
            bytes += numKvHeads * (k + v);
        }
        return Math.round(bytes);
    };
    return Object.fromEntries(kvCacheTypes.map((type) => [type, byType(type)])) as Record<KvCacheType, number | undefined>;
}

async function estimate(
    insights: GgufInsights,
    kvBytesPerToken: number,
    contextSize: number,
    sequences: number
): Promise<ModelMemoryEstimate | undefined> {
    try {
        const gpuLayers = insights.totalLayers;
        const [modelCpu, modelGpu, contextCpu, contextGpu] = await Promise.all([
            insights.estimateModelResourceRequirementsV2({ gpuLayers: 0 }),
            insights.estimateModelResourceRequirementsV2({ gpuLayers }),
            insights.estimateContextResourceRequirementsV2({ contextSize, sequences, modelGpuLayers: 0 }),
            insights.estimateContextResourceRequirementsV2({ contextSize, sequences, modelGpuLayers: gpuLayers })
        ]);
        return {
            contextSize,
            sequences,
            kvCacheBytes: kvBytesPerToken * contextSize * sequences,
            cpu: { ramBytes: modelCpu.cpuRam + modelCpu.gpuVram + contextCpu.cpuRam + contextCpu.gpuVram },
            gpu: { ramBytes: modelGpu.cpuRam + contextGpu.cpuRam, vramBytes: modelGpu.gpuVram + contextGpu.gpuVram }
        };
    } catch {
        return undefined; // an architecture node-llama-cpp cannot estimate: the facts still stand
    }
}
