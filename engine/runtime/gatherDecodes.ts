import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import { once } from "../core/once.js";

/** node-llama-cpp's private members of a context and its sequences that the gathering uses (3.21). */
interface QueueInternals {
    readonly _queuedDecodeSequenceIds?: Set<number>;
    readonly _queuedDecodes?: { readonly sequenceId: number }[];
    readonly _scheduleDecode?: () => void;
}
interface AfterBatchInternals {
    _takeIntervalCheckpointIfNeededAfterBatch?: (sequenceStateLength: number) => Promise<void> | void;
}

/** What one context's gathering counts: its generating sequences, and the operations waiting for it; see `gatherDecodes`. */
export interface DecodeGathering {
    /** Whether node-llama-cpp had the members the gathering needs; without them its own batching stands. */
    readonly active: boolean;
    /** Sequences of the context generating now. */
    readonly numGenerating: number;
    /** A sequence starts generating; the function returned says it stopped (idempotent). */
    generating(): () => void;
    /**
     * Runs an operation that waits for the context's lock (a state save or load, a clear): while it
     * waits, the context ends its run of batches after the current one, so that the operation goes
     * between two decode steps, not after the streams' last; see `gatherDecodes`.
     */
    betweenSteps<T>(operation: () => Promise<T>): Promise<T>;
}

/** A context's sequences left to node-llama-cpp's own batching (the prefill context). */
export const ungathered: DecodeGathering = {
    active: false,
    numGenerating: 0,
    generating: () => () => undefined,
    betweenSteps: (operation) => operation()
};

/**
 * Makes the generating sequences of `context` decode together, one batch a step, as llama-server's
 * slots do. node-llama-cpp samples each sequence of a batch separately and, once the last sample
 * is in, composes the next batch at once from the decodes queued by then; the sequence sampled
 * last has not queued its next token yet (it is still on its way up through the generators), so
 * it misses every batch and decodes in the next: 4 streams decoded in batches of 3 tokens, 8 in
 * batches of 7, each batch costing a whole pass over the weights (docs/measurements.md). Here, after a batch,
 * when fewer sequences have queued than are generating, the context waits one turn of the event
 * loop before it composes the next; the promise chains of every sampled sequence run out within
 * it. A sequence waiting on something else (the streaming demo's delay) costs a turn for each
 * sequence of the batch, a few microseconds each.
 *
 * node-llama-cpp decodes batch after batch under the context's lock for as long as decodes are
 * queued, and a state save or load, or a clear, waits for that lock; with the streams kept in
 * step the queue is never empty while one generates, so a second workspace's handoff waited for
 * the first stream's last token instead of going between two of its steps (docs/measurements.md).
 * So while such an operation waits (`betweenSteps`), the queue is set aside
 * after a batch and put back a turn later: the run of batches ends, the operation takes the lock,
 * and the decodes follow it.
 */
export function gatherDecodes(context: LlamaContext, sequences: readonly LlamaContextSequence[]): DecodeGathering {
    const {
        _queuedDecodeSequenceIds: queued,
        _queuedDecodes: queue,
        _scheduleDecode: scheduleDecode
    } = context as unknown as QueueInternals;
    const hooks = sequences.map((sequence) => sequence as unknown as AfterBatchInternals);
    if (
        !(queued instanceof Set) ||
        !Array.isArray(queue) ||
        typeof scheduleDecode !== "function" ||
        hooks.some((hook) => typeof hook._takeIntervalCheckpointIfNeededAfterBatch !== "function")
    ) {
        return ungathered;
    }
    let numGenerating = 0;
    let numWaiting = 0;
    /** Empties the queue, so that the run of batches ends after this one, and refills it a turn later. */
    const yieldContext = (): void => {
        const setAside = queue.splice(0, queue.length);
        for (const decode of setAside) {
            queued.delete(decode.sequenceId);
        }
        if (setAside.length > 0) {
            setImmediate(() => {
                for (const decode of setAside) {
                    queue.push(decode);
                    queued.add(decode.sequenceId);
                }
                scheduleDecode.call(context); // its dispatch waits for the lock behind the operation
            });
        }
    };
    for (const hook of hooks) {
        const own = hook._takeIntervalCheckpointIfNeededAfterBatch!; // bound to its sequence by node-llama-cpp
        hook._takeIntervalCheckpointIfNeededAfterBatch = (sequenceStateLength) => {
            const checkpoint = own(sequenceStateLength);
            if (numWaiting > 0) {
                // synchronously when it can: node-llama-cpp checks its queue right after the last of these
                return checkpoint instanceof Promise ? checkpoint.then(yieldContext) : yieldContext();
            }
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
            return once(() => numGenerating--);
        },
        async betweenSteps(operation) {
            numWaiting++;
            try {
                return await operation();
            } finally {
                numWaiting--;
            }
        }
    };
}
