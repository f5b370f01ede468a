import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";

/** node-llama-cpp's private members of a context and its sequences that the gathering uses (3.21). */
interface QueueInternals {
    readonly _queuedDecodeSequenceIds?: ReadonlySet<number>;
}
interface AfterBatchInternals {
    _takeIntervalCheckpointIfNeededAfterBatch?: (sequenceStateLength: number) => Promise<void> | void;
}

/** Counts the sequences of one context that are generating; see `gatherDecodes`. */
export interface DecodeGathering {
    /** Whether node-llama-cpp had the members the gathering needs; without them its own batching stands. */
    readonly active: boolean;
    /** Sequences of the context generating now. */
    readonly numGenerating: number;
    /** A sequence starts generating; the function returned says it stopped (idempotent). */
    generating(): () => void;
}

/**
 * Makes the generating sequences of `context` decode together, one batch a step, as llama-server's
 * slots do. node-llama-cpp samples each sequence of a batch separately and, once the last sample
 * is in, composes the next batch at once from the decodes queued by then; the sequence sampled
 * last has not queued its next token yet (it is still on its way up through the generators), so
 * it misses every batch and decodes in the next: 4 streams measured 378 batches of 3 tokens, 8
 * streams batches of 7, each batch costing a whole pass over the weights. Here, after a batch,
 * when fewer sequences have queued than are generating, the context waits one turn of the event
 * loop before it composes the next; the promise chains of every sampled sequence run out within
 * it. A sequence waiting on something else (the streaming demo's delay) costs a turn for each
 * sequence of the batch, a few microseconds each.
 */
export function gatherDecodes(context: LlamaContext, sequences: readonly LlamaContextSequence[]): DecodeGathering {
    const queued = (context as unknown as QueueInternals)._queuedDecodeSequenceIds;
    const hooks = sequences.map((sequence) => sequence as unknown as AfterBatchInternals);
    if (!(queued instanceof Set) || hooks.some((hook) => typeof hook._takeIntervalCheckpointIfNeededAfterBatch !== "function")) {
        return { active: false, numGenerating: 0, generating: () => () => undefined };
    }
    let numGenerating = 0;
    for (const hook of hooks) {
        const own = hook._takeIntervalCheckpointIfNeededAfterBatch!; // bound to its sequence by node-llama-cpp
        hook._takeIntervalCheckpointIfNeededAfterBatch = (sequenceStateLength) => {
            const checkpoint = own(sequenceStateLength);
            if (queued.size >= numGenerating) {
                return checkpoint;
            }
            const turn = new Promise<void>((resolve) => setImmediate(resolve));
            return checkpoint instanceof Promise ? Promise.all([checkpoint, turn]).then(() => undefined) : turn;
        };
    }
    return {
        active: true,
        get numGenerating() {
            return numGenerating;
        },
        generating() {
            numGenerating++;
            let ended = false;
            return () => {
                if (!ended) {
                    ended = true;
                    numGenerating--;
                }
            };
        }
    };
}
