import os from "node:os";
import type { EngineConfigInput } from "../../engine/EngineConfig.js";
import { specialTokens } from "../../synthetic/model/syntheticVocabulary.js";

/** Text for prompts; its tokens are repeated to any length. Prefill cost does not depend on the words. */
export const PROMPT_TEXT =
    "Kvault keeps the KV cache of every workspace in host pages. A page is zeroed before it returns to the free list, " +
    "sealed with a checksum when prefill has written it, and verified by decode before a byte is loaded. " +
    "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. 0123456789.";

/**
 * CPU threads for every context, bare and engine alike. node-llama-cpp's own default oversubscribes a
 * 2-core machine (4 threads) and decodes many times slower (docs/ARCHITECTURE.md, Threads; figures in
 * docs/measurements.md).
 */
export const BENCH_THREADS = os.availableParallelism();

/** "auto" lets node-llama-cpp pick a GPU; the default is the CPU build, so runs on any machine compare. */
export const BENCH_GPU: "auto" | false = process.env.KVAULT_BENCH_GPU === "auto" ? "auto" : false;

/**
 * The engine every benchmark measures: one window for all contexts, flash attention, the bench's
 * threads and backend, and by default pages enough to hold the window once per decode sequence.
 */
export function benchEngineConfig(
    modelPath: string,
    contextSize: number,
    pageTokens: number,
    overrides: Partial<Omit<EngineConfigInput, "modelPath">> = {}
): EngineConfigInput {
    const numDecodeSequences = overrides.numDecodeSequences ?? 1;
    return {
        modelPath,
        mode: "split",
        window: contextSize,
        prefillContextSize: contextSize,
        decodeContextSize: contextSize,
        numDecodeSequences,
        pageTokens,
        numPages: numDecodeSequences * (contextSize / pageTokens),
        flashAttention: true,
        threads: BENCH_THREADS,
        gpu: BENCH_GPU,
        ...overrides
    };
}

/** Repetitions of the model benchmarks: `fallback`, or KVAULT_BENCH_REPETITIONS (1–50) on a noisy machine. */
export function repetitionsFromEnvironment(fallback: number): number {
    const value = Number(process.env.KVAULT_BENCH_REPETITIONS ?? fallback);
    if (!Number.isSafeInteger(value) || value < 1 || value > 50) {
        throw new RangeError(`KVAULT_BENCH_REPETITIONS is ${process.env.KVAULT_BENCH_REPETITIONS}; use a whole number from 1 to 50.`);
    }
    return value;
}

/**
 * Exactly `length` prompt tokens: BOS (the generated models' tokenizer does not add it), then the
 * text's tokens repeated and cut to length.
 */
export function promptTokensOfLength(tokenize: (text: string) => readonly number[], length: number): number[] {
    const body = tokenize(PROMPT_TEXT);
    if (body.length === 0 || length < 1) {
        throw new RangeError(`cannot build a ${length}-token prompt from ${body.length} text tokens`);
    }
    const tokens: number[] = [specialTokens.bos.id];
    for (let index = 0; tokens.length < length; index++) {
        tokens.push(body[index % body.length]!);
    }
    return tokens;
}
