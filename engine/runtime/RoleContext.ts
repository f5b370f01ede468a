import type { KvLayout } from "../codec/KvLayout.js";
import type { ParsedSequenceState } from "../codec/parseSequenceState.js";
import type { StateChunks, StateTarget } from "../codec/statePages.js";
import type { SequenceSlot } from "./SequenceSlot.js";

export type ContextRole = "prefill" | "decode" | "unified";

/** A sequence's state out of its context: parsed, with its bytes, and the way to give their memory back. */
export type ExportedState = ParsedSequenceState & {
    readonly bytes: Buffer;
    /**
     * Gives the bytes' memory back for the context's next state, once they are in pages; idempotent.
     * Nothing may read the state after (its bytes may read as empty). Never calling it only costs
     * the next state a fresh buffer.
     */
    readonly release: () => void;
};

/**
 * A context serving one role, as scheduling and handoff see it: sequences to take and give back,
 * evaluation, and KV states in and out in llama.cpp's format. `LlamaRoleContext` is the one over
 * node-llama-cpp; unit tests give a fake with the same contract.
 */
export interface RoleContext {
    readonly role: ContextRole;
    /** Tokens one sequence holds, as the context was actually created. */
    readonly sequenceCapacity: number;
    readonly numSequences: number;
    /** The state's stream count this context writes and requires on load; undefined when not a plain KV cache. */
    readonly numStreams: number | undefined;
    /** Measured from a real state; undefined when the memory is not a plain KV cache (unified mode only). */
    readonly layout: KvLayout | undefined;
    readonly numFreeSequences: number;
    readonly numBusySequences: number;
    /** Input tokens evaluated in this context's sequences so far. */
    readonly numEvaluatedTokens: number;

    /** Takes the free sequence of the lowest index, or undefined when all are in use (ask `numFreeSequences` first). */
    acquireSequence(): SequenceSlot | undefined;
    /** Clears a sequence's cells and returns it to the free list. */
    releaseSequence(slot: SequenceSlot): Promise<void>;
    /** Clears a sequence's cells; the caller keeps it (for another workspace). */
    clearSequence(slot: SequenceSlot): Promise<void>;
    /** Evaluates tokens into the sequence's KV without sampling; the caller admitted them already. */
    evaluate(slot: SequenceSlot, tokens: readonly number[]): Promise<void>;
    /**
     * The sequence's state, parsed, with its bytes. `label` names the state file for a moment (a
     * request id, `swap-…`, `export-…`): it is no id of anything.
     */
    exportState(slot: SequenceSlot, label: string): Promise<ExportedState>;
    /**
     * Saves the sequence's state straight into pages, as `target` plans it (`planStateTarget`), where
     * this context's state exchange can (through memory); absent where it cannot. Resolves false,
     * having written nothing, when the state is not the size planned: the caller exports it whole.
     */
    readonly saveStateInto?: (slot: SequenceSlot, target: StateTarget) => Promise<boolean>;
    /**
     * Whether `importState` verifies a transfer's pages as it loads them (`StateChunks.pageChecks`:
     * through memory, Kvault's build); where not, the transfer verifies them before assembling.
     */
    readonly verifiesPagesOnLoad: boolean;
    /**
     * Loads a state the codec assembled and validated for this context's layout and stream count:
     * one buffer, or the chunks that view a transfer's pages (read before the promise settles),
     * each page verified as it is read where they carry `pageChecks`, and nothing loaded (the
     * sequence left empty) where one fails.
     */
    importState(slot: SequenceSlot, state: Buffer | StateChunks, label: string): Promise<void>;
    /** Idempotent. */
    dispose(): Promise<void>;
}
