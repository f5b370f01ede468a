import type { LlamaContextSequence } from "node-llama-cpp";
import type { PageChecks, StateTarget } from "../codec/statePages.js";
import type { StateWriteStage } from "./stateDirectoryErrors.js";

/** A sequence's state out of llama.cpp: its bytes, in the state file's format, and the way to give their memory back. */
export interface SavedState {
    readonly bytes: Buffer;
    /**
     * Gives the bytes' memory back for a later save or load; idempotent. Nothing may read the
     * bytes after: through memory, every view of them reads as empty from then on, never as the
     * next state's bytes.
     */
    release(): void;
}

/**
 * How a role context moves a sequence's state out of llama.cpp and back in: through memory
 * (`MemoryStateExchange`, Kvault's patched addon) or through the private state directory
 * (`FileStateExchange`, any binary). Both carry the same bytes, the state file's format, so the
 * codec reads either alike. Chosen when the engine starts (`createStateExchange`).
 */
export interface StateExchange {
    readonly kind: "memory" | "file";
    /**
     * The sequence's state. `numBytes` is its size when the layout is known already, asked for
     * room before anything is written; `label` names a state file for the instant it exists.
     */
    save(sequence: LlamaContextSequence, label: string, numBytes: number | undefined, stage: StateWriteStage): Promise<SavedState>;
    /**
     * Saves the state straight into pages, as `target` plans it (its metadata apart); whether it did:
     * not when the state's size is not the plan's, nothing written then. Absent where the exchange
     * cannot (through files): the caller saves the state whole and copies it into the pages.
     */
    saveInto?(sequence: LlamaContextSequence, target: StateTarget): Promise<boolean>;
    /**
     * Whether `load` verifies pages as it reads them (`checks`, through memory in Kvault's build);
     * where not, the caller verifies them before it assembles the state.
     */
    readonly verifiesPagesOnLoad: boolean;
    /**
     * Loads a state of `numBytes` bytes, given as chunks in order (views of pages, read before the
     * promise settles); with `checks` (only where `verifiesPagesOnLoad`), each page verified as it
     * is read, the sequence left empty where one fails (`PageChecks`).
     */
    load(
        sequence: LlamaContextSequence,
        chunks: readonly Uint8Array[],
        numBytes: number,
        label: string,
        checks?: PageChecks
    ): Promise<void>;
    /** Lets go of what the exchange keeps for later states; idempotent. */
    dispose(): void;
}
