import type { HandoffProgress, HandoffStepName } from "../../contract/EngineSnapshot.js";
import type { WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { RequestTimings } from "../engineTypes.js";
import type { PagePool } from "../pages/PagePool.js";
import type { RequestRecord } from "../request/RequestRecord.js";
import type { Reservation } from "../pages/Reservation.js";
import type { RoleContext } from "../runtime/RoleContext.js";
import type { SequenceSlot } from "../runtime/SequenceSlot.js";
import type { PageWaits } from "../scheduler/TurnScheduler.js";
import type { PageManifest } from "./PageManifest.js";
import type { PageTransfer, PageTransferHooks, TransferTarget } from "./PageTransfer.js";
import { exportedStateSource, sequenceStateSource, type ExportedStateSource, type StateSource } from "./StateSource.js";
import type { PrefillOverflowPolicy } from "./PrefillOverflowPolicy.js";

/** What a handoff works with: both contexts, the pool and the transfer over it, where to wait for pages. */
export interface HandoffParts {
    readonly prefill: RoleContext;
    readonly decode: RoleContext;
    readonly pool: PagePool;
    readonly transfer: PageTransfer;
    readonly pages: PageWaits;
    readonly prefillOverflow: PrefillOverflowPolicy;
    readonly hooks: Pick<PageTransferHooks, "afterLoad">;
    /** Waits before each step: nothing by default; a pause a person can watch in the page map's demo mode. */
    readonly pacing?: HandoffPacing;
}

/** How long a handoff waits before each of its steps (`handoffStepNames`). */
export interface HandoffPacing {
    beforeStep(step: HandoffStepName): Promise<void>;
}

/** No wait: the production pacing. */
export const unpacedHandoff: HandoffPacing = Object.freeze({ beforeStep: () => Promise.resolve() });

/** Waits `delayMs` before every step, so that pages can be seen going prefill → host → decode. */
export function pacedHandoff(delayMs: number): HandoffPacing {
    invariant(Number.isSafeInteger(delayMs) && delayMs >= 0, () => `a handoff step delay of ${delayMs} ms`);
    return { beforeStep: () => new Promise((resolve) => setTimeout(resolve, delayMs)) };
}

/** What the prefill sequence holds now, for the page map. */
export interface PrefillHolder {
    readonly workspace: WorkspaceId;
    readonly slot: SequenceSlot;
}

/**
 * Prefill → pages → verified decode load (docs/ARCHITECTURE.md, the handoff protocol): prefill
 * evaluates a turn's new tokens on top of the workspace's history, its KV travels through sealed
 * pages, and decode loads it only after the reader verified every page. Prompts arriving together
 * prefill at once, one prefill sequence each, so node-llama-cpp evaluates their tokens in the same
 * batches and four arrivals wait for one batch, not for each other; with every prefill sequence
 * taken, a prefill waits for the first to come free (first come, first served). Transfers into
 * decode do not wait on each other.
 */
export class Handoff {
    /** Prefills waiting for a prefill sequence, in arrival order; each is woken with the sequence it gets. */
    readonly #waiting: ((slot: SequenceSlot) => void)[] = [];
    /** What each prefill sequence in use holds, by its index. */
    readonly #prefillHolders = new Map<number, PrefillHolder>();
    /** Handoffs in flight, by request id: which step each is at. */
    readonly #progress = new Map<string, HandoffProgress>();

    constructor(private readonly parts: HandoffParts) {}

    /** The prefill sequence `index` and the workspace whose turn holds it; undefined while it is free. */
    prefillHolder(index: number): PrefillHolder | undefined {
        return this.#prefillHolders.get(index);
    }

    /** Every handoff in flight and its step, oldest first. */
    progress(): readonly HandoffProgress[] {
        return [...this.#progress.values()];
    }

    /**
     * Prefill evaluates `prompt[numReused, n − 1)` on top of the workspace's history and hands the
     * whole sequence back through pages into `slot`; decode evaluates the last token itself. The
     * history the workspace holds goes to prefill through pages too, never by recompute.
     */
    async run(
        record: RequestRecord,
        workspace: WorkspaceId,
        slot: SequenceSlot,
        prompt: readonly number[],
        numReused: number,
        timings: RequestTimings
    ): Promise<void> {
        const { prefill, decode, prefillOverflow, pool } = this.parts;
        const startedAt = performance.now();
        const expectedTokens = prompt.slice(0, -1);
        let written: WrittenPages | ExportedStateSource;
        const prefillSlot = await this.#acquirePrefillSequence();
        this.#prefillHolders.set(prefillSlot.index, { workspace, slot: prefillSlot });
        const step = async (name: HandoffStepName): Promise<void> => {
            this.#progress.set(record.id, { workspace, step: name, decodeSequence: slot.index });
            await (this.parts.pacing ?? unpacedHandoff).beforeStep(name);
            record.throwIfEnded();
        };
        try {
            record.enter({ kind: "prefilling" });
            if (numReused > 0) {
                await step("history to prefill");
                const history = await this.#writePages(record, workspace, sequenceStateSource(decode, slot, record.id), slot.numTokens);
                await this.#loadPages(record, workspace, history, prefill, prefillSlot, Array.from(slot.tokens));
            }
            await step("prefilling");
            const prefillStartedAt = performance.now();
            const toEvaluate = prompt.slice(numReused, -1);
            await prefill.evaluate(
                prefillSlot,
                prefillOverflow.tokensToEvaluate(toEvaluate, prefillSlot.numTokens, prefill.sequenceCapacity, pool.config.pageTokens)
            );
            timings.prefillMs = performance.now() - prefillStartedAt;
            record.enter({ kind: "transferring" });
            await step("sealing pages");
            const source = sequenceStateSource(prefill, prefillSlot, record.id);
            if (this.parts.pages.canGrantSoon(this.parts.transfer.numPagesFor(expectedTokens.length))) {
                // written while prefill still holds the sequence: llama.cpp saves it straight into the pages
                written = await this.#writePages(record, workspace, source, expectedTokens.length);
            } else {
                // the pages wait for running transfers: exported now, so that the sequence is not held meanwhile
                written = exportedStateSource(await source.exportWhole());
            }
        } catch (error) {
            this.#progress.delete(record.id);
            throw error;
        } finally {
            this.#prefillHolders.delete(prefillSlot.index);
            await this.#releasePrefillSequence(prefillSlot);
        }
        try {
            record.throwIfEnded();
            if (!("manifest" in written)) {
                written = await this.#writePages(record, workspace, written, expectedTokens.length);
            }
            // the demo mode's pause while the pages sit sealed in the pool
            await step("pages to decode");
            await this.#loadPages(record, workspace, written, decode, slot, expectedTokens);
        } finally {
            if (!("manifest" in written)) {
                written.release(); // ended before its bytes reached the pages
            }
            this.#progress.delete(record.id);
        }
        invariant(
            slot.numTokens === prompt.length - 1,
            () => `decode sequence ${slot.index} holds ${slot.numTokens} tokens after loading ${prompt.length - 1}`
        );
        timings.handoffMs = performance.now() - startedAt - timings.prefillMs;
    }

    /** A free prefill sequence now when no prefill waits before this one, else the next to come free. */
    #acquirePrefillSequence(): Promise<SequenceSlot> {
        const { prefill } = this.parts;
        if (this.#waiting.length === 0) {
            const slot = prefill.acquireSequence();
            if (slot !== undefined) {
                return Promise.resolve(slot);
            }
        }
        return new Promise<SequenceSlot>((resolve) => this.#waiting.push(resolve));
    }

    /**
     * Clears the sequence, then hands it straight to the longest-waiting prefill, or back to the
     * context when none waits: a sequence is never free while a prefill waits for one.
     */
    async #releasePrefillSequence(slot: SequenceSlot): Promise<void> {
        const { prefill } = this.parts;
        const next = this.#waiting.shift();
        if (next === undefined) {
            await prefill.releaseSequence(slot);
            return;
        }
        try {
            await prefill.clearSequence(slot);
        } catch (error) {
            this.#waiting.unshift(next); // it waits on for the next sequence that comes free
            throw error;
        }
        next(slot);
    }

    /**
     * The first half of a verified transfer through the pool: reserve pages for `numExpectedTokens`
     * (what the reader expects, never what the writer claims), write the source's state into them
     * and seal them.
     */
    async #writePages(
        record: RequestRecord,
        workspace: WorkspaceId,
        source: StateSource,
        numExpectedTokens: number
    ): Promise<WrittenPages> {
        const { pool, transfer, pages } = this.parts;
        const numPages = transfer.numPagesFor(numExpectedTokens);
        // Reserved in the step that found the room, and held by the request in the same step: a
        // reservation always has its owner, and a request cancelled meanwhile reserves nothing.
        const reservation = await pages.reservePages(record.id, numPages, () => {
            record.throwIfEnded();
            const taken = pool.reserve({ workspace, holder: record.id, numPages, firstToken: 0 });
            record.holdPages(taken);
            return taken;
        });
        record.throwIfEnded();
        const manifest = await transfer.writeFrom(reservation, source);
        record.throwIfEnded();
        return { reservation, manifest };
    }

    /**
     * The second half: verify the pages against the tokens the reader expects, then load them
     * straight into `targetSlot` (gathered into the state file, no copy of the state in between),
     * the read leases held until the load is done; release them.
     */
    async #loadPages(
        record: RequestRecord,
        workspace: WorkspaceId,
        { reservation, manifest }: WrittenPages,
        target: RoleContext,
        targetSlot: SequenceSlot,
        expectedTokens: readonly number[]
    ): Promise<void> {
        const { transfer, hooks } = this.parts;
        await transfer.load(
            manifest,
            {
                holder: record.id,
                workspace,
                generation: reservation.generation,
                tokens: expectedTokens,
                reservedPages: reservation.pages.map((handle) => handle.pageId)
            },
            targetOf(target),
            async (assembled) => {
                record.throwIfEnded();
                await target.importState(targetSlot, assembled, record.id);
            }
        );
        hooks.afterLoad?.(record.id, targetSlot.tokens);
        record.releasePages();
    }
}

/** A transfer's sealed pages and the completion that describes them. */
interface WrittenPages {
    readonly reservation: Reservation;
    readonly manifest: PageManifest;
}

function targetOf(context: RoleContext): TransferTarget {
    invariant(
        context.layout !== undefined && context.numStreams !== undefined,
        () => `the ${context.role} context has no measured KV layout`
    );
    return { layout: context.layout, numStreams: context.numStreams, verifiesPagesOnLoad: context.verifiesPagesOnLoad };
}
