import { blockOffsetsInPage, bytesPerToken, type KvLayout } from "../../engine/codec/KvLayout.js";
import { parseSequenceState } from "../../engine/codec/parseSequenceState.js";
import {
    assembleSequenceState,
    bufferPageAccess,
    concatStateChunks,
    type StateChunks,
    type StateTarget
} from "../../engine/codec/statePages.js";
import { invariant } from "../../engine/core/invariant.js";
import type { ContextRole, ExportedState, RoleContext } from "../../engine/runtime/RoleContext.js";
import type { ProbabilityRequest, SamplingOptions, SequenceSlot } from "../../engine/runtime/SequenceSlot.js";
import { takeLowestIndex } from "../../engine/runtime/takeLowestIndex.js";
import { writeStateInto } from "./splitStateAsWritten.js";
import { pageChecksum } from "../../engine/pages/pageChecksum.js";

// A stand-in for node-llama-cpp behind the engine's RoleContext and SequenceSlot interfaces, for
// fast unit tests of scheduling and handoff. It keeps no model: a position's KV row is a function
// of the token there and its position, so a state it exports is a real llama.cpp state (built and
// parsed by the engine's own codec), and a state it loads is checked row by row against its
// tokens: KV that belongs to other tokens, or bytes that changed on the way, are counted.

/** Two layers, 4-byte K and V rows, V in rows: 16 bytes a token. */
export const FAKE_LAYOUT: KvLayout = Object.freeze({
    vTransposed: false,
    layers: [0, 1].map(() => ({ kType: 1, vType: 1, kRowBytes: 4, vRowBytes: 4, vElementBytes: 0, numVElements: 0 }))
});

/** The byte `byte` of the K (part 0) or V (part 1) row of `layer` at `position`, holding `token`: never 0. */
export function kvByte(token: number, position: number, layer: number, part: 0 | 1, byte: number): number {
    return ((token * 31 + position * 7 + layer * 5 + part * 3 + byte) % 255) + 1;
}

export class FakeSequenceSlot implements SequenceSlot {
    readonly #tokens: number[] = [];
    numEvaluatedTokens = 0;
    /** A fake sequence never speculates. */
    readonly tokenPredictions = { validated: 0, refuted: 0 };
    /** Rows of loaded states whose bytes were not those of their tokens at their positions. */
    numForeignRows = 0;

    constructor(
        readonly index: number,
        private readonly capacity: number
    ) {}

    get numTokens(): number {
        return this.#tokens.length;
    }

    get tokens(): readonly number[] {
        return [...this.#tokens];
    }

    async truncate(position: number): Promise<void> {
        this.#tokens.length = Math.min(this.#tokens.length, position);
    }

    /** Appends tokens to the sequence's KV, as an evaluation does. */
    append(tokens: readonly number[]): void {
        invariant(
            this.#tokens.length + tokens.length <= this.capacity,
            () => `a fake sequence of ${this.capacity} tokens holding ${this.#tokens.length} is given ${tokens.length} more`
        );
        this.#tokens.push(...tokens);
        this.numEvaluatedTokens += tokens.length;
    }

    /** Replaces what the sequence holds, as a state load does. */
    load(tokens: readonly number[]): void {
        this.#tokens.length = 0;
        this.#tokens.push(...tokens);
    }

    /**
     * Evaluates `tokens`, then yields tokens that depend on everything the sequence holds: a
     * sampled token joins the KV when the consumer asks for the next one, as in llama.cpp.
     */
    async *generate(
        tokens: readonly number[],
        _sampling: SamplingOptions,
        probabilities?: ProbabilityRequest
    ): AsyncGenerator<number, "eog" | "stopped", void> {
        this.append(tokens);
        for (let step = 0; step < this.capacity; step++) {
            const next = this.#tokens.reduce((hash, token, position) => (hash * 33 + token + position) % 997, 17);
            probabilities?.onToken({ token: next, logprob: 0, top: [] });
            yield next;
            this.append([next]);
        }
        return "stopped";
    }
}

export class FakeRoleContext implements RoleContext {
    readonly slots: readonly FakeSequenceSlot[];
    readonly #free: FakeSequenceSlot[];
    /** Every `evaluate` call's token count, in order. */
    readonly evaluations: number[] = [];
    /** States exported and not yet released: 0 once every transfer gave its state's memory back. */
    numUnreleasedStates = 0;
    disposed = false;

    constructor(
        readonly role: ContextRole,
        readonly numSequences: number,
        readonly sequenceCapacity: number,
        readonly layout: KvLayout | undefined = FAKE_LAYOUT,
        readonly numStreams: number | undefined = numSequences
    ) {
        this.slots = Array.from({ length: numSequences }, (_, index) => new FakeSequenceSlot(index, sequenceCapacity));
        this.#free = [...this.slots];
    }

    get numFreeSequences(): number {
        return this.#free.length;
    }

    get numBusySequences(): number {
        return this.numSequences - this.#free.length;
    }

    get numEvaluatedTokens(): number {
        return this.slots.reduce((sum, slot) => sum + slot.numEvaluatedTokens, 0);
    }

    acquireSequence(): SequenceSlot | undefined {
        return takeLowestIndex(this.#free);
    }

    async releaseSequence(slot: SequenceSlot): Promise<void> {
        const own = this.#own(slot);
        invariant(!this.#free.includes(own), () => `fake sequence ${slot.index} of the ${this.role} context released twice`);
        own.load([]);
        this.#free.push(own);
    }

    async clearSequence(slot: SequenceSlot): Promise<void> {
        this.#own(slot).load([]);
    }

    async evaluate(slot: SequenceSlot, tokens: readonly number[]): Promise<void> {
        this.evaluations.push(tokens.length);
        this.#own(slot).append(tokens);
    }

    /** Saves states straight into pages, as the patched addon does (`RoleContext.saveStateInto`), once `saveIntoPages` was called. */
    saveStateInto?: (slot: SequenceSlot, target: StateTarget) => Promise<boolean>;
    /** States saved straight into pages so far. */
    numSavedIntoPages = 0;

    /**
     * From now on saves states straight into pages, its metadata and KV rows split as llama.cpp
     * writes them; `beforeWrite` runs once the save began, before a byte is written.
     */
    saveIntoPages(beforeWrite: () => Promise<void> = () => Promise.resolve()): this {
        this.saveStateInto = async (slot, target) => {
            const bytes = this.#wholeState(slot);
            await beforeWrite();
            const written = writeStateInto(target, bytes);
            this.numSavedIntoPages += written ? 1 : 0;
            return written;
        };
        return this;
    }

    async exportState(slot: SequenceSlot): Promise<ExportedState> {
        const bytes = this.#wholeState(slot);
        this.numUnreleasedStates++;
        let released = false;
        const release = (): void => {
            if (!released) {
                released = true;
                this.numUnreleasedStates--;
            }
        };
        return { ...parseSequenceState(bytes), bytes, release };
    }

    /** Whether `importState` verifies pages as it loads them, as Kvault's build does through memory: once `verifyPagesOnLoad` was called. */
    verifiesPagesOnLoad = false;
    /** Loads whose pages failed their checks, the sequence left empty. */
    numLoadsRefused = 0;

    /** From now on verifies a transfer's pages as it loads them (`StateChunks.pageChecks`), as Kvault's build does. */
    verifyPagesOnLoad(): this {
        this.verifiesPagesOnLoad = true;
        return this;
    }

    async importState(slot: SequenceSlot, state: Buffer | StateChunks): Promise<void> {
        const own = this.#own(slot);
        const checks = Buffer.isBuffer(state) ? undefined : state.pageChecks;
        if (checks !== undefined) {
            if (!this.verifiesPagesOnLoad) {
                throw new Error("pages to verify on load, given to a context that does not");
            }
            checks.pages.forEach((page, index) => {
                checks.recomputed[index] = pageChecksum(page, Number(checks.seeds[index]));
            });
            if (checks.recomputed.some((checksum, index) => checksum !== checks.expected[index])) {
                this.numLoadsRefused++;
                own.load([]);
                return;
            }
        }
        const parsed = parseSequenceState(Buffer.isBuffer(state) ? state : concatStateChunks(state));
        parsed.layout.layers.forEach((layer, index) => {
            const rows = parsed.layers[index]!;
            parsed.tokens.forEach((token, position) => {
                const kRow = rows.k.subarray(position * layer.kRowBytes, (position + 1) * layer.kRowBytes);
                const vRow = rows.v.subarray(position * layer.vRowBytes, (position + 1) * layer.vRowBytes);
                const kFits = kRow.every((value, byte) => value === kvByte(token, position, index, 0, byte));
                const vFits = vRow.every((value, byte) => value === kvByte(token, position, index, 1, byte));
                own.numForeignRows += (kFits ? 0 : 1) + (vFits ? 0 : 1);
            });
        });
        own.load(Array.from(parsed.tokens));
    }

    async dispose(): Promise<void> {
        this.disposed = true;
    }

    /** The state llama.cpp would save for `slot`: every KV byte a function of its token, position, layer and place. */
    #wholeState(slot: SequenceSlot): Buffer {
        const layout = this.#layout();
        const tokens = slot.tokens;
        const numTokens = tokens.length;
        // One page as long as the state: every layer's K rows, then every layer's V rows.
        const page = Buffer.alloc(numTokens * bytesPerToken(layout));
        const offsets = blockOffsetsInPage(layout, numTokens);
        layout.layers.forEach((layer, index) => {
            const kOffset = offsets.k[index]!;
            const vOffset = offsets.v[index]!;
            tokens.forEach((token, position) => {
                for (let byte = 0; byte < layer.kRowBytes; byte++) {
                    page[kOffset + position * layer.kRowBytes + byte] = kvByte(token, position, index, 0, byte);
                }
                for (let byte = 0; byte < layer.vRowBytes; byte++) {
                    page[vOffset + position * layer.vRowBytes + byte] = kvByte(token, position, index, 1, byte);
                }
            });
        });
        return assembleSequenceState({
            tokens,
            layout,
            targetLayout: layout,
            targetNumStreams: this.numStreams ?? 1,
            pages: bufferPageAccess([page]),
            pageTokens: numTokens
        });
    }

    #own(slot: SequenceSlot): FakeSequenceSlot {
        const own = this.slots[slot.index];
        invariant(own === slot, () => `a sequence of another context (index ${slot.index}) was used in the fake ${this.role} context`);
        return own;
    }

    #layout(): KvLayout {
        invariant(this.layout !== undefined, `the fake ${this.role} context has no KV layout`);
        return this.layout;
    }
}
