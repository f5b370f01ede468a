/** One batch a context decoded: each sequence added (node-llama-cpp's addToBatch) and its token count, in batch order. */
export type RecordedBatch = { readonly sequenceId: number; readonly numTokens: number }[];

/** node-llama-cpp's native context (3.21), as far as the recording wraps it. */
interface NativeBatching {
    initBatch(size: number): void;
    addToBatch(sequenceId: number, first: number, tokens: Uint32Array, logits: Uint32Array): Uint32Array;
}

/**
 * Records every batch a node-llama-cpp context (a `LlamaContext`) composes from now on, by wrapping
 * its native context's initBatch and addToBatch; the array returned grows as it decodes.
 */
export function recordBatches(context: object): RecordedBatch[] {
    const native = (context as { _ctx: NativeBatching })._ctx;
    const { initBatch, addToBatch } = { initBatch: native.initBatch.bind(native), addToBatch: native.addToBatch.bind(native) };
    const batches: RecordedBatch[] = [];
    Object.defineProperty(native, "initBatch", {
        value: (size: number) => {
            batches.push([]);
            initBatch(size);
        }
    });
    Object.defineProperty(native, "addToBatch", {
        value: (sequenceId: number, first: number, tokens: Uint32Array, logits: Uint32Array) => {
            batches.at(-1)!.push({ sequenceId, numTokens: tokens.length });
            return addToBatch(sequenceId, first, tokens, logits);
        }
    });
    return batches;
}
