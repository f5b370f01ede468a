import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describeLayoutMismatch } from "../codec/KvLayout.js";
import { parseSequenceState } from "../codec/parseSequenceState.js";
import { sequenceStateBytes } from "../codec/statePages.js";
import type { RoleContext } from "../runtime/RoleContext.js";
import type { SequenceSlot } from "../runtime/SequenceSlot.js";
import { openDiskKv, sealDiskKv, type DiskKvBinding } from "./diskKvFormat.js";

/** Beyond the state itself, a file holds the magic, a header of at most 4 KiB, the nonce and the tag. */
const MAX_FILE_OVERHEAD_BYTES = 8192;
const FILE_SUFFIX = ".kvstate";

/** What a turn's start found on disk for its workspace: a state loaded instead of prefilled, or one refused, deleted and recomputed. */
export type DiskKvRestore =
    | { readonly kind: "restored"; readonly numTokens: number }
    | { readonly kind: "refused"; readonly reason: string };

/**
 * The KV of workspaces that keep it on disk (opt-in, per turn): one file each, the decode
 * sequence's state sealed with AES-256-GCM (diskKvFormat.ts) and bound to the model, the KV layout
 * and type, the page size and the decode context. A turn that starts with nothing resident loads
 * it instead of prefilling; anything that does not match is refused, deleted and recomputed.
 */
export class DiskKvStore {
    readonly #maxFileBytes: number;

    constructor(
        readonly directory: string,
        private readonly key: Buffer,
        private readonly binding: DiskKvBinding,
        private readonly decode: RoleContext
    ) {
        fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
        const { layout, numStreams } = decode;
        this.#maxFileBytes =
            layout === undefined || numStreams === undefined
                ? 0
                : sequenceStateBytes(decode.sequenceCapacity, layout, numStreams) + MAX_FILE_OVERHEAD_BYTES;
    }

    /** The workspace's file: named by a hash of its id, which may hold any character. */
    pathOf(workspace: string): string {
        const name = crypto.createHash("sha256").update(workspace, "utf8").digest("hex").slice(0, 32);
        return path.join(this.directory, `${name}${FILE_SUFFIX}`);
    }

    /**
     * Loads the workspace's state into `slot` (an empty decode sequence); undefined when it has no
     * file. A refused file is deleted and `slot` left empty, so the turn recomputes.
     */
    async restore(workspace: string, slot: SequenceSlot, label: string): Promise<DiskKvRestore | undefined> {
        const filePath = this.pathOf(workspace);
        let numBytes: number;
        try {
            numBytes = fs.statSync(filePath).size;
        } catch {
            return undefined;
        }
        const refused = (reason: string): DiskKvRestore => {
            this.remove(workspace);
            return { kind: "refused", reason };
        };
        if (numBytes > this.#maxFileBytes) {
            return refused(`it holds ${numBytes} bytes; a state of this decode context holds at most ${this.#maxFileBytes}`);
        }
        const opened = openDiskKv(fs.readFileSync(filePath), this.binding, workspace, this.key);
        if (!opened.ok) {
            return refused(opened.reason);
        }
        let numTokens: number;
        try {
            const parsed = parseSequenceState(opened.state);
            const mismatch =
                parsed.numStreams !== this.decode.numStreams
                    ? `its state has ${parsed.numStreams} streams; the decode context has ${this.decode.numStreams}`
                    : describeLayoutMismatch(this.decode.layout!, parsed.layout);
            if (mismatch !== undefined) {
                return refused(mismatch);
            }
            numTokens = parsed.tokens.length;
            await this.decode.importState(slot, opened.state, label);
        } catch (error) {
            await this.decode.clearSequence(slot);
            return refused(`its state could not be loaded (${(error as Error).message})`);
        }
        return { kind: "restored", numTokens };
    }

    /** Writes what `slot` holds as the workspace's file, in place of the last one (a rename: never a torn file under the name). */
    async save(workspace: string, slot: SequenceSlot, label: string): Promise<void> {
        if (slot.numTokens === 0) {
            this.remove(workspace);
            return;
        }
        const state = await this.decode.exportState(slot, label);
        try {
            const parts = sealDiskKv(state.bytes, this.binding, workspace, this.key);
            const filePath = this.pathOf(workspace);
            const partial = `${filePath}.${process.pid}.partial`;
            try {
                const fd = fs.openSync(partial, "w", 0o600);
                try {
                    for (const part of parts) {
                        fs.writeSync(fd, part);
                    }
                    fs.fsyncSync(fd);
                } finally {
                    fs.closeSync(fd);
                }
                fs.renameSync(partial, filePath);
            } catch (error) {
                fs.rmSync(partial, { force: true });
                throw error;
            }
        } finally {
            state.release();
        }
    }

    /** Deletes the workspace's file; idempotent. */
    remove(workspace: string): void {
        fs.rmSync(this.pathOf(workspace), { force: true });
    }
}
