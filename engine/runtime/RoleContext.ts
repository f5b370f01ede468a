import type { LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { invariant } from "../core/invariant.js";
import { KvaultError } from "../core/KvaultError.js";
import { parseSequenceState, type ParsedSequenceState } from "../codec/parseSequenceState.js";
import type { KvLayout } from "../codec/KvLayout.js";
import type { PrivateStateDirectory } from "./PrivateStateDirectory.js";

export type ContextRole = "prefill" | "decode" | "unified";

export interface RoleContextOptions {
    readonly role: ContextRole;
    /** Tokens per sequence asked for; node-llama-cpp may pad it up, never down. */
    readonly contextSize: number;
    readonly numSequences: number;
    readonly batchSize?: number;
    readonly flashAttention: boolean;
    readonly threads?: number;
}

/** node-llama-cpp tried to shift (truncate) a sequence; the engine admits nothing that would need it. */
export class ContextShiftRefusedError extends KvaultError {
    readonly code = "context_shift_refused";
}

/**
 * Every evaluation passes this: a context shift would silently drop the start of a conversation,
 * so instead of erasing anything it fails the request (admission should have made this unreachable).
 */
export const refuseContextShift = {
    strategy: ({ sequence }: { sequence: LlamaContextSequence }): never => {
        throw new ContextShiftRefusedError(`The ${sequence.contextSize}-token sequence is full and would have to drop its oldest tokens; Kvault refuses to truncate. Start a new chat or raise the context size.`);
    }
};

/**
 * One node-llama-cpp context serving a role. Its capacity and KV layout are measured from the
 * context that was actually created (a probe state is written and parsed at start), never taken
 * from configuration.
 */
export class RoleContext {
    private readonly freeSequences: LlamaContextSequence[];
    private disposed = false;

    private constructor(
        readonly role: ContextRole,
        readonly context: LlamaContext,
        /** Tokens one sequence holds, as node-llama-cpp created it. */
        readonly sequenceCapacity: number,
        readonly numSequences: number,
        /** The state's stream count this context writes and requires on load. */
        readonly numStreams: number,
        readonly layout: KvLayout,
        sequences: LlamaContextSequence[],
        private readonly stateDirectory: PrivateStateDirectory
    ) {
        this.freeSequences = sequences;
    }

    static async create(model: LlamaModel, options: RoleContextOptions, stateDirectory: PrivateStateDirectory): Promise<RoleContext> {
        const context = await model.createContext({
            contextSize: options.contextSize,
            sequences: options.numSequences,
            batchSize: options.batchSize,
            flashAttention: options.flashAttention,
            threads: options.threads
        });
        try {
            const sequences: LlamaContextSequence[] = [];
            for (let i = 0; i < options.numSequences; i++)
                sequences.push(context.getSequence({ contextShift: refuseContextShift }));

            // Measure the layout from a real state of this context: one token, saved and parsed.
            const probe = sequences[0]!;
            await probe.evaluateWithoutGeneratingNewTokens(model.tokenize("probe"));
            const probePath = stateDirectory.nextFilePath(`${options.role}-probe`);
            await probe.saveStateToFile(probePath);
            const measured = parseSequenceState(stateDirectory.readAndRemove(probePath));
            await probe.clearHistory();

            return new RoleContext(options.role, context, probe.contextSize, options.numSequences,
                measured.numStreams, measured.layout, sequences, stateDirectory);
        } catch (error) {
            await context.dispose();
            throw error;
        }
    }

    get numFreeSequences(): number {
        return this.freeSequences.length;
    }

    /** Takes a free sequence, or undefined when all are in use (ask `numFreeSequences` first). */
    acquireSequence(): LlamaContextSequence | undefined {
        return this.freeSequences.pop();
    }

    /** Clears a sequence's cells and returns it to the free list. */
    async releaseSequence(sequence: LlamaContextSequence): Promise<void> {
        invariant(sequence.context === this.context, `a sequence of another context was released into the ${this.role} context`);
        invariant(!this.freeSequences.includes(sequence), `sequence released twice into the ${this.role} context`);
        if (!sequence.disposed)
            await sequence.clearHistory();
        this.freeSequences.push(sequence);
    }

    /** Evaluates tokens into the sequence's KV without sampling; the caller admitted them already. */
    async evaluate(sequence: LlamaContextSequence, tokens: Token[]): Promise<void> {
        invariant(sequence.nextTokenIndex + tokens.length <= this.sequenceCapacity,
            () => `evaluating ${tokens.length} tokens after ${sequence.nextTokenIndex} overflows the ${this.sequenceCapacity}-token ${this.role} sequence`);
        await sequence.evaluateWithoutGeneratingNewTokens(tokens, { contextShift: refuseContextShift });
    }

    /** Writes the sequence's state through the private directory and parses it; the file is gone on return. */
    async exportState(sequence: LlamaContextSequence, label: string): Promise<ParsedSequenceState & { readonly bytes: Buffer }> {
        const filePath = this.stateDirectory.nextFilePath(label);
        try {
            await sequence.saveStateToFile(filePath);
        } catch (error) {
            this.stateDirectory.remove(filePath);
            throw error;
        }
        const bytes = this.stateDirectory.readAndRemove(filePath);
        return { ...parseSequenceState(bytes), bytes };
    }

    /**
     * Loads a state the codec assembled and validated for this context's layout and stream count.
     * node-llama-cpp's `acceptRisk` is required by its API; the safety comes from that validation,
     * done before this call.
     */
    async importState(sequence: LlamaContextSequence, state: Buffer, label: string): Promise<void> {
        const filePath = this.stateDirectory.nextFilePath(label);
        try {
            this.stateDirectory.writeExclusive(filePath, state);
            await sequence.loadStateFromFile(filePath, { acceptRisk: true });
        } finally {
            this.stateDirectory.remove(filePath);
        }
    }

    async dispose(): Promise<void> {
        if (this.disposed)
            return;
        this.disposed = true;
        await this.context.dispose();
    }
}
