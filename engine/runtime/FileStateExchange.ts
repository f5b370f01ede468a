import type { LlamaContextSequence } from "node-llama-cpp";
import type { PageChecks } from "../codec/statePages.js";
import { invariant } from "../core/invariant.js";
import type { PrivateStateDirectory } from "./PrivateStateDirectory.js";
import type { StateWriteStage } from "./stateDirectoryErrors.js";
import type { SavedState, StateExchange } from "./StateExchange.js";

/**
 * States through files in the private state directory (RAM-backed where the OS offers it), with
 * node-llama-cpp's own `saveStateToFile` and `loadStateFromFile`: what every binary can do, the
 * prebuilt included. Each file is gone when the call returns.
 */
export class FileStateExchange implements StateExchange {
    readonly kind = "file";
    readonly verifiesPagesOnLoad = false;

    constructor(readonly directory: PrivateStateDirectory) {}

    /**
     * llama.cpp reports a failed write only when it fails before its file is closed: on a full file
     * system, a small state's only flush comes at the close, whose error it ignores, and it reports
     * success over a short file. So the size read back must be the size it reported. Throws
     * `StateDirectoryFullError` before writing when a state of `numBytes` will not fit, and it or
     * `StateDirectoryUnwritableError` when llama.cpp's write fails for want of room or of a directory.
     */
    async save(sequence: LlamaContextSequence, label: string, numBytes: number | undefined, stage: StateWriteStage): Promise<SavedState> {
        if (numBytes !== undefined) {
            this.directory.ensureRoom(numBytes);
        }
        const filePath = this.directory.nextFilePath(label);
        let numBytesReported: number;
        try {
            numBytesReported = (await sequence.saveStateToFile(filePath)).fileSize;
        } catch (error) {
            this.directory.remove(filePath);
            throw this.directory.explainWriteFailure(error, numBytes, stage);
        }
        const bytes = this.directory.readAndRemove(filePath);
        if (bytes.length !== numBytesReported) {
            throw this.directory.explainWriteFailure(
                new Error(`llama.cpp reported writing a ${numBytesReported}-byte state file, which holds ${bytes.length} bytes`),
                numBytes ?? numBytesReported,
                stage
            );
        }
        return { bytes, release: () => undefined }; // read into a buffer of its own: the collector takes it back
    }

    /**
     * Written in one gathered write, then loaded. node-llama-cpp's `acceptRisk` is required by its
     * API; the safety comes from the codec's validation, done before this call. Throws
     * `StateDirectoryFullError` or `StateDirectoryUnwritableError` when the file cannot be written,
     * having loaded nothing.
     */
    async load(
        sequence: LlamaContextSequence,
        chunks: readonly Uint8Array[],
        numBytes: number,
        label: string,
        checks?: PageChecks
    ): Promise<void> {
        invariant(checks === undefined, "a state through files cannot verify its pages as it loads them: they are verified before");
        this.directory.ensureRoom(numBytes);
        const filePath = this.directory.nextFilePath(label);
        try {
            this.directory.writeExclusive(filePath, chunks, numBytes);
            await sequence.loadStateFromFile(filePath, { acceptRisk: true });
        } finally {
            this.directory.remove(filePath);
        }
    }

    /** Keeps nothing: the directory is the engine's, disposed with it. */
    dispose(): void {}
}
