import { type CustomBatchingPrioritizationStrategy, type LlamaContext, type LlamaModel, type Token } from "node-llama-cpp";
import { invariant } from "../core/invariant.js";
import { parseSequenceState, type ParsedSequenceState } from "../codec/parseSequenceState.js";
import { sequenceStateBytes, type StateChunks, type StateTarget } from "../codec/statePages.js";
import { StateFormatError } from "../codec/codecErrors.js";
import type { KvLayout } from "../codec/KvLayout.js";
import { kvCacheTypeTraits, type KvCacheType } from "../codec/kvCacheTypes.js";
import type { StateExchange } from "./StateExchange.js";
import { refuseContextShift } from "./refuseContextShift.js";
import { LlamaSequenceSlot } from "./LlamaSequenceSlot.js";
import { attachThreadpool, type ContextThreadpool } from "./addonPatch/contextThreadpool.js";
import { releaseThreadsPromptly } from "./releaseThreadsPromptly.js";
import type { ComputeTurns } from "./ComputeTurns.js";
import { takeComputeTurns } from "./takeComputeTurns.js";
import { gatherDecodes, ungathered, type DecodeGathering } from "./gatherDecodes.js";
import { orderDecodesBySequence } from "./orderDecodesBySequence.js";
import { takeLowestIndex } from "./takeLowestIndex.js";
import { createTokenPredictors, type Speculation, type TokenPredictors } from "./createTokenPredictors.js";
import { DraftModelPredictor } from "./DraftModelPredictor.js";
import type { ContextRole, ExportedState, RoleContext } from "./RoleContext.js";
import type { SequenceSlot } from "./SequenceSlot.js";

export interface RoleContextOptions {
    readonly role: ContextRole;
    /** Tokens per sequence asked for; node-llama-cpp may pad it up, never down. */
    readonly contextSize: number;
    readonly numSequences: number;
    readonly batchSize?: number;
    readonly flashAttention: boolean;
    /** K and V both, F16 when absent; the layout measured from the probe state shows what llama.cpp made of it. */
    readonly kvCacheType?: KvCacheType;
    readonly threads?: number;
    /**
     * Speculative decoding in every sequence: "input-lookup" drafts the next tokens from where the
     * latest ones occur in the sequence's own tokens (a chat that quotes its context); a draft
     * model drafts them in a context of its own (DraftModelPredictor). One decode step verifies
     * them all. Greedy output is plain decoding's but where the model's two likeliest tokens are
     * within rounding of a tie: a verification batch sums in another order than one token's, as in
     * llama.cpp's own speculative decoding. Off when absent.
     */
    readonly speculation?: Speculation;
    /**
     * How long this context's ggml pool threads poll for the next graph before they sleep, 0–100
     * (ggml's level; llama-server's default is 50), in a binary with Kvault's patch. Absent: ggml's
     * own pool per graph, as in node-llama-cpp's prebuilt.
     */
    readonly threadpoolPoll?: number;
    /**
     * Whether the context's generating sequences decode together, one batch a step
     * (gatherDecodes): for the contexts that sample. Every context fills its batches in sequence
     * order (orderDecodesBySequence).
     */
    readonly gatherDecodes?: boolean;
    /** Which queued tokens go into each batch; node-llama-cpp's "maximumParallelism" when absent (oneSequenceABatch for prefill). */
    readonly batchItems?: CustomBatchingPrioritizationStrategy;
    /**
     * The turns this context's batches compute in, shared with the engine's other contexts (split
     * mode): one graph at a time, each with every thread; absent, node-llama-cpp splits the threads
     * among the contexts that compute at once.
     */
    readonly computeTurns?: ComputeTurns;
}

/**
 * One node-llama-cpp context serving a role. Its capacity and KV layout are measured from the
 * context that was actually created (a probe state is written and parsed at start), never taken
 * from configuration.
 */
export class LlamaRoleContext implements RoleContext {
    private readonly freeSlots: LlamaSequenceSlot[];
    private readonly allSlots: readonly LlamaSequenceSlot[];
    private disposed = false;

    private constructor(
        readonly role: ContextRole,
        readonly context: LlamaContext,
        /** Tokens one sequence holds, as node-llama-cpp created it. */
        readonly sequenceCapacity: number,
        readonly numSequences: number,
        /** The state's stream count this context writes and requires on load; undefined when not a plain KV cache. */
        readonly numStreams: number | undefined,
        /** Measured from a real state; undefined when the memory is not a plain KV cache (unified mode only). */
        readonly layout: KvLayout | undefined,
        slots: LlamaSequenceSlot[],
        /** How states leave and enter llama.cpp: through memory or through the private state directory. */
        readonly states: StateExchange,
        /** The context's own ggml thread pool; undefined where the binary computes each graph on a pool of its own (the prebuilt). */
        readonly threadpool: ContextThreadpool | undefined,
        /** Keeps its generating sequences in step, and lets state operations in between (gatherDecodes); `ungathered` for prefill. */
        private readonly gathering: DecodeGathering,
        /** The sequences' token predictors, and the draft model's context when there is one. */
        private readonly predictors: TokenPredictors
    ) {
        this.allSlots = [...slots];
        this.freeSlots = [...slots];
    }

    static async create(model: LlamaModel, options: RoleContextOptions, states: StateExchange): Promise<LlamaRoleContext> {
        const kvType = kvCacheTypeTraits[options.kvCacheType ?? "f16"].ggmlName;
        const context = await model.createContext({
            contextSize: options.contextSize,
            sequences: options.numSequences,
            batchSize: options.batchSize,
            flashAttention: options.flashAttention,
            experimentalKvCacheKeyType: kvType,
            experimentalKvCacheValueType: kvType,
            threads: options.threads,
            batching: options.batchItems === undefined ? undefined : { itemPrioritizationStrategy: options.batchItems }
        });
        releaseThreadsPromptly(context);
        if (options.computeTurns !== undefined) {
            takeComputeTurns(context, options.computeTurns);
        }
        orderDecodesBySequence(context);
        let predictors: TokenPredictors | undefined;
        try {
            const threadpool = options.threadpoolPoll === undefined ? undefined : await attachThreadpool(context, options.threadpoolPoll);
            predictors = await createTokenPredictors(options.speculation, {
                numSequences: options.numSequences,
                contextSize: context.contextSize,
                flashAttention: options.flashAttention,
                threads: options.threads,
                threadpoolPoll: options.threadpoolPoll,
                computeTurns: options.computeTurns
            });
            const sequences = Array.from({ length: options.numSequences }, (_, i) =>
                context.getSequence({ contextShift: refuseContextShift, tokenPredictor: predictors!.forSequence(i) })
            );
            await predictors.checkDraft(sequences[0]!);
            const gathering = options.gatherDecodes === true ? gatherDecodes(context, sequences) : ungathered;
            const slots = sequences.map((sequence, i) => new LlamaSequenceSlot(sequence, i, gathering));

            // Measure the layout from a real state of this context: a few tokens, saved and parsed.
            const probe = slots[0]!.sequence;
            await probe.evaluateWithoutGeneratingNewTokens(probeTokens(model));
            const probeState = await states.save(probe, `${options.role}-probe`, undefined, "start");
            await probe.clearHistory();
            let measured: ParsedSequenceState | undefined;
            try {
                measured = parseSequenceState(probeState.bytes);
            } catch (error) {
                if (!(error instanceof StateFormatError) || options.role !== "unified") {
                    throw error;
                }
                measured = undefined; // a memory pages cannot hold; unified mode needs no handoff
            } finally {
                probeState.release();
            }

            return new LlamaRoleContext(
                options.role,
                context,
                probe.contextSize,
                options.numSequences,
                measured?.numStreams,
                measured?.layout,
                slots,
                states,
                threadpool,
                gathering,
                predictors
            );
        } catch (error) {
            await context.dispose();
            await predictors?.dispose();
            throw error;
        }
    }

    get numFreeSequences(): number {
        return this.freeSlots.length;
    }

    /** Input tokens node-llama-cpp evaluated in this context's sequences (their token meters), the start-up probe included. */
    get numEvaluatedTokens(): number {
        return this.allSlots.reduce((sum, slot) => sum + slot.numEvaluatedTokens, 0);
    }

    /** Sequences generating now (a turn's stream between its first token and its last). */
    get numGenerating(): number {
        return this.gathering.numGenerating;
    }

    get numBusySequences(): number {
        return this.numSequences - this.freeSlots.length;
    }

    /**
     * The free sequence of the lowest index (takeLowestIndex), not the most recently released, as a
     * stack gives: sequences at work together then tend to have consecutive ids, which llama.cpp
     * computes as one graph.
     */
    acquireSequence(): SequenceSlot | undefined {
        return takeLowestIndex(this.freeSlots);
    }

    async releaseSequence(slot: SequenceSlot): Promise<void> {
        const own = this.#own(slot, "released");
        invariant(!this.freeSlots.includes(own), () => `sequence ${slot.index} released twice into the ${this.role} context`);
        if (!own.sequence.disposed) {
            await this.gathering.betweenSteps(() => own.sequence.clearHistory());
        }
        await forgetDraft(own);
        this.freeSlots.push(own);
    }

    async clearSequence(slot: SequenceSlot): Promise<void> {
        const own = this.#own(slot, "cleared");
        invariant(!this.freeSlots.includes(own), () => `sequence ${slot.index} of the ${this.role} context is cleared while free`);
        await this.gathering.betweenSteps(() => own.sequence.clearHistory());
        await forgetDraft(own);
    }

    async evaluate(slot: SequenceSlot, tokens: readonly number[]): Promise<void> {
        invariant(
            slot.numTokens + tokens.length <= this.sequenceCapacity,
            () =>
                `evaluating ${tokens.length} tokens after ${slot.numTokens} overflows the ${this.sequenceCapacity}-token ${this.role} sequence`
        );
        await this.#own(slot, "evaluated").sequence.evaluateWithoutGeneratingNewTokens(tokens as Token[], {
            contextShift: refuseContextShift
        });
    }

    /**
     * The sequence's state, saved through the context's state exchange and parsed. Through files,
     * throws `StateDirectoryFullError` before writing when the state will not fit, and it or
     * `StateDirectoryUnwritableError` when llama.cpp's write fails for want of room or of a
     * directory; through memory, `SequenceStateError`. Release it once its bytes are in pages.
     */
    async exportState(slot: SequenceSlot, label: string): Promise<ExportedState> {
        const numBytes =
            this.layout === undefined || this.numStreams === undefined
                ? undefined
                : sequenceStateBytes(slot.numTokens, this.layout, this.numStreams);
        const sequence = this.#own(slot, "exported").sequence;
        const saved = await this.gathering.betweenSteps(() => this.states.save(sequence, label, numBytes, "request"));
        try {
            return { ...parseSequenceState(saved.bytes), bytes: saved.bytes, release: saved.release };
        } catch (error) {
            saved.release();
            throw error;
        }
    }

    /** Present where the state exchange saves straight into pages (through memory). */
    get saveStateInto(): ((slot: SequenceSlot, target: StateTarget) => Promise<boolean>) | undefined {
        const states = this.states;
        if (states.saveInto === undefined) {
            return undefined;
        }
        return (slot, target) => {
            const sequence = this.#own(slot, "exported").sequence;
            return this.gathering.betweenSteps(() => states.saveInto!(sequence, target));
        };
    }

    /** Whether `importState` verifies a transfer's pages as it loads them: through memory, Kvault's build (`RoleContext.verifiesPagesOnLoad`). */
    get verifiesPagesOnLoad(): boolean {
        return this.states.verifiesPagesOnLoad;
    }

    /**
     * Loads a state the codec assembled and validated for this context's layout and stream count.
     * Throws, having loaded nothing, when the exchange cannot carry it (a full or unwritable state
     * directory, or memory that could not be had).
     */
    async importState(slot: SequenceSlot, state: Buffer | StateChunks, label: string): Promise<void> {
        const own = this.#own(slot, "loaded");
        const { chunks, numBytes, pageChecks } = Buffer.isBuffer(state)
            ? { chunks: [state], numBytes: state.length, pageChecks: undefined }
            : state;
        await this.gathering.betweenSteps(() => this.states.load(own.sequence, chunks, numBytes, label, pageChecks));
    }

    /** `slot` as this context's own sequence; one of another context is a bug. */
    #own(slot: SequenceSlot, operation: string): LlamaSequenceSlot {
        const own = this.allSlots[slot.index];
        invariant(own === slot, () => `a sequence of another context (index ${slot.index}) was ${operation} in the ${this.role} context`);
        return own;
    }

    async dispose(): Promise<void> {
        if (this.disposed) {
            return;
        }
        this.disposed = true;
        this.states.dispose();
        await this.context.dispose();
        await this.predictors.dispose();
    }
}

/** A cleared sequence's draft holds nothing either: its next tokens may be another workspace's. */
async function forgetDraft(slot: LlamaSequenceSlot): Promise<void> {
    const predictor = slot.sequence.tokenPredictor;
    if (predictor instanceof DraftModelPredictor) {
        await predictor.forget();
    }
}

/**
 * The start-up probe's text, several tokens in every vocabulary: the probe is a context's first
 * graph, and on ggml's Vulkan backend (node-llama-cpp's prebuilt) a context whose first graph is a
 * single token with flash attention and several sequences crashes the process (SIGSEGV) at its
 * first one-token decode once a sequence holds more than 256 tokens (Qwen3 and Gemma 3 presets on
 * llvmpipe); a first graph of two or more tokens never did.
 */
const PROBE_TEXT = "Kvault probes the state layout";

/** The fewest tokens the probe may be, by the crash above. */
const MIN_PROBE_TOKENS = 2;

function probeTokens(model: LlamaModel): Token[] {
    const tokens = model.tokenize(PROBE_TEXT);
    invariant(
        tokens.length >= MIN_PROBE_TOKENS,
        () => `the probe text is ${tokens.length} token(s) in this vocabulary; it needs ${MIN_PROBE_TOKENS}`
    );
    return tokens;
}
