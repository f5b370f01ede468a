// The model catalogue and Hugging Face search (rpcSpec modelCatalogue, searchModels, modelRepoFiles),
// and the one "fits this machine" arithmetic both the host and its tests use.

/** The contexts a catalogue verdict may count KV for, tokens. */
export const catalogueContextSizes = Object.freeze({ min: 256, max: 1_048_576 });

export const catalogueQuants = ["Q4_K_M", "Q8_0", "F16"] as const;
export type CatalogueQuant = (typeof catalogueQuants)[number];

/** What a KV estimate needs of a model's architecture (the GGUF header's numbers). */
export interface KvArchitecture {
    readonly numLayers: number;
    /** KV heads (fewer than query heads with grouped-query attention). */
    readonly numKvHeads: number;
    /** Values in one K (and one V) head. */
    readonly headSize: number;
    /** The context length it was trained with, tokens. */
    readonly trainContextSize: number;
}

/** Free memory of the machine the host runs on, bytes, when the verdicts were computed. */
export interface MachineMemory {
    /** `os.freemem()` of the host. */
    readonly freeRamBytes: number;
    readonly totalRamBytes: number;
    /** The engine's GPU (node-llama-cpp's getVramState, through rpcSpec resourceUse); absent on the CPU or when the engine did not say. */
    readonly vram?: { readonly freeBytes: number; readonly totalBytes: number };
}

/**
 * Where a verdict's numbers came from: the GGUF header of the file in the model library (`header`),
 * the catalogue's architecture numbers (`catalogue`), or the file's size alone, KV not counted,
 * for a search hit whose architecture is unknown until it is downloaded (`size`).
 */
export type FitBasis = "header" | "catalogue" | "size";

export type FitVerdictKind = "gpu" | "ram" | "tooBig";

export interface FitVerdict {
    readonly kind: FitVerdictKind;
    readonly weightsBytes: number;
    /** KV of one sequence of `contextSize` tokens, F16; 0 when the basis is `size`. */
    readonly kvBytes: number;
    /** weightsBytes + kvBytes. */
    readonly needBytes: number;
    readonly contextSize: number;
    readonly basis: FitBasis;
    /** What the user reads, with the numbers: "fits on the GPU", "fits in RAM", "too big: needs N GB, this machine has M free". */
    readonly text: string;
}

/** F16 K and V of every layer for one token: 2 × layers × KV heads × head size × 2 bytes. */
export function kvBytesPerToken(architecture: Pick<KvArchitecture, "numLayers" | "numKvHeads" | "headSize">): number {
    return 2 * architecture.numLayers * architecture.numKvHeads * architecture.headSize * 2;
}

const GB = 1e9;

/** Bytes as GB with one decimal (decimal gigabytes, as Hugging Face and disk makers count). */
export function formatGb(bytes: number): string {
    return `${(bytes / GB).toFixed(1)} GB`;
}

/**
 * The verdict for one file: the weights (its size) and the KV of `contextSize` tokens
 * (`kvBytesPerTokenOf` × contextSize) against this machine's free memory. The GPU first (it must
 * hold both), then RAM; otherwise too big, with what it needs and what the machine has free (the
 * larger of free RAM and free VRAM, the most it could get).
 */
export function fitVerdict(input: {
    readonly weightsBytes: number;
    /** KV bytes of one token; 0 when unknown (basis `size`). */
    readonly kvBytesPerToken: number;
    readonly contextSize: number;
    readonly basis: FitBasis;
    readonly machine: MachineMemory;
}): FitVerdict {
    const { weightsBytes, contextSize, basis, machine } = input;
    const kvBytes = input.kvBytesPerToken * contextSize;
    const needBytes = weightsBytes + kvBytes;
    const kvNote =
        basis === "size"
            ? " (the file alone: KV unknown until its header is read)"
            : ` with ${contextSize.toLocaleString("en-US")} tokens of KV`;
    const base = { weightsBytes, kvBytes, needBytes, contextSize, basis };
    if (machine.vram !== undefined && needBytes <= machine.vram.freeBytes) {
        return {
            ...base,
            kind: "gpu",
            text: `fits on the GPU: needs ${formatGb(needBytes)}${kvNote}, ${formatGb(machine.vram.freeBytes)} VRAM free`
        };
    }
    if (needBytes <= machine.freeRamBytes) {
        return { ...base, kind: "ram", text: `fits in RAM: needs ${formatGb(needBytes)}${kvNote}, ${formatGb(machine.freeRamBytes)} free` };
    }
    const freeBytes = Math.max(machine.freeRamBytes, machine.vram?.freeBytes ?? 0);
    return {
        ...base,
        kind: "tooBig",
        text: `too big: needs ${formatGb(needBytes)}${kvNote}, this machine has ${formatGb(freeBytes)} free`
    };
}

/** One file of a catalogue model, with its verdict for this machine. */
export interface CatalogueFileView {
    readonly quant: CatalogueQuant;
    readonly fileName: string;
    readonly sizeBytes: number;
    /** What startDownload takes for it (a Hugging Face resolve URL): the existing download path, its size cap, disk check and names. */
    readonly downloadSource: string;
    readonly fit: FitVerdict;
}

export interface CatalogueModelView {
    readonly id: string;
    readonly name: string;
    readonly family: string;
    /** e.g. "1B", "0.6B". */
    readonly parameters: string;
    /** Hugging Face repository, owner/name. */
    readonly repo: string;
    readonly architecture: KvArchitecture;
    readonly files: readonly CatalogueFileView[];
}

export interface ModelCatalogueView {
    /** Where the catalogue's numbers come from, and when they were recorded (ISO date). */
    readonly source: string;
    readonly recordedOn: string;
    /** The context the verdicts count KV for, tokens. */
    readonly contextSize: number;
    readonly machine: MachineMemory;
    /** Why no VRAM is counted, when none is. */
    readonly vramNote?: string;
    readonly models: readonly CatalogueModelView[];
}

/** One Hugging Face model a search found. */
export interface ModelSearchHit {
    /** owner/name */
    readonly repo: string;
    readonly downloads: number;
    readonly likes: number;
}

/** A search's answer: the hits, or offline (the catalogue is all there is) with why. */
export type ModelSearchResult =
    | { readonly kind: "online"; readonly query: string; readonly hits: readonly ModelSearchHit[] }
    | { readonly kind: "offline"; readonly message: string };

/** One GGUF file of a Hugging Face repository, with its verdict for this machine (basis `size`). */
export interface RepoFileView {
    readonly fileName: string;
    readonly sizeBytes: number;
    readonly downloadSource: string;
    readonly fit: FitVerdict;
}

export type RepoFilesResult =
    | { readonly kind: "online"; readonly repo: string; readonly files: readonly RepoFileView[]; readonly machine: MachineMemory }
    | { readonly kind: "offline"; readonly message: string };
