import { swapId, type SwapId, type WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { EngineCounters } from "../engineTypes.js";
import type { PageTransfer, TransferTarget } from "../handoff/PageTransfer.js";
import { sequenceStateSource } from "../handoff/StateSource.js";
import type { PagePool } from "../pages/PagePool.js";
import type { RoleContext } from "../runtime/RoleContext.js";
import type { SequenceSlot } from "../runtime/SequenceSlot.js";
import { planEviction, planRoom, reclaimableSwaps } from "../scheduler/schedulingPlans.js";
import { WorkspaceRecord, type WorkspaceResidency } from "./WorkspaceRecord.js";
import { noMemoryEvents, type MemoryEventSink } from "../audit/MemoryEventLog.js";

/** Times a swap-out asks for room again after waiting for pages being zeroed off the engine's thread. */
const MAX_ROOM_ATTEMPTS = 3;

/**
 * Where every workspace's KV is: resident in a decode sequence, swapped out into sealed pages it
 * owns, or nowhere. More workspaces than decode sequences share them; a swapped workspace comes
 * back byte-verified, without recompute. Which workspace is evicted and whose pages are taken back
 * is the scheduler's decision (engine/scheduler/schedulingPlans.ts); this table carries it out.
 */
export class WorkspaceTable {
    readonly #workspaces = new Map<WorkspaceId, WorkspaceRecord>();
    /** Swap-outs writing their pages, by holder: the generation each reserved. Their workspace is marked swapped once the write is sealed. */
    readonly #swapOutsInFlight = new Map<SwapId, number>();

    constructor(
        private readonly decode: RoleContext,
        private readonly pool: PagePool,
        private readonly transfer: PageTransfer,
        private readonly target: TransferTarget | undefined,
        private readonly counters: EngineCounters,
        /** Called when a workspace that was busy moving its KV can take turns again. */
        private readonly onIdle: () => void,
        /** The memory timeline: each swap out and in, with the pages it wrote or read. */
        private readonly events: MemoryEventSink = noMemoryEvents
    ) {}

    /** Unified mode pages nothing: an evicted workspace recomputes from its history. */
    private get canSwap(): boolean {
        return this.target !== undefined;
    }

    all(): readonly WorkspaceRecord[] {
        return [...this.#workspaces.values()];
    }

    /**
     * The swap-outs whose pages are being written now, each holder with the generation it
     * reserved: the write gives the event loop back between layers and pages, so an audit can
     * come while they own pages that no swapped workspace lists yet.
     */
    swapOutsInFlight(): ReadonlyMap<SwapId, number> {
        return new Map(this.#swapOutsInFlight);
    }

    /** The workspace's record, made on first use. */
    get(id: WorkspaceId): WorkspaceRecord {
        let workspace = this.#workspaces.get(id);
        if (workspace === undefined) {
            workspace = new WorkspaceRecord(id);
            this.#workspaces.set(id, workspace);
        }
        return workspace;
    }

    /**
     * The workspace's decode sequence: where it is resident, swapped back in, or a free one.
     * `fileLabel` names the state file of a swap-in for an instant (the request's id, or `export-…`).
     */
    async residentSlot(workspace: WorkspaceRecord, fileLabel: string): Promise<SequenceSlot> {
        const residency = workspace.residency;
        if (residency.kind === "resident") {
            return residency.slot;
        }
        const slot = await this.#freeSlot();
        if (residency.kind === "swapped") {
            try {
                // verified, then loaded straight from the pages, as a handoff is
                await this.transfer.load(
                    residency.manifest,
                    {
                        holder: residency.reservation.holder,
                        workspace: workspace.id,
                        generation: residency.reservation.generation,
                        tokens: residency.manifest.tokens
                    },
                    this.target!,
                    (state) => this.decode.importState(slot, state, fileLabel)
                );
                this.counters.swapIns++;
                workspace.numSwapIns++;
                this.events.record({
                    kind: "swappedIn",
                    workspace: workspace.id,
                    requestId: residency.reservation.holder,
                    pages: [...residency.manifest.pages],
                    pageState: "sealed",
                    generation: residency.reservation.generation,
                    numTokens: residency.manifest.tokens.length,
                    outcome: "ok",
                    detail: `${residency.manifest.tokens.length} tokens loaded into decode sequence ${slot.index}`
                });
            } catch (error) {
                await this.decode.releaseSequence(slot);
                throw error;
            } finally {
                this.#releaseSwapPages(workspace);
            }
        }
        workspace.residency = { kind: "resident", slot };
        return slot;
    }

    /** A free decode sequence, swapping the least recently used idle workspace out into pages if none is free. */
    async #freeSlot(): Promise<SequenceSlot> {
        const free = this.decode.acquireSequence();
        if (free !== undefined) {
            return free;
        }
        const victim = planEviction(this.all());
        invariant(
            victim !== undefined && victim.residency.kind === "resident",
            () =>
                `no decode sequence free and no idle resident workspace among ${this.#workspaces.size} on ${this.decode.numSequences} sequences`
        );
        // The victim's sequence passes straight to the caller: never through the free list, where
        // another turn could take it between the release and the acquire.
        // While its KV moves to pages the victim is busy: its own next turn waits, and no one else picks it.
        const slot = victim.residency.slot;
        victim.busy = true;
        try {
            await this.#swapOut(victim, slot);
            await this.decode.clearSequence(slot);
        } catch (error) {
            // The swap did not happen (no room for its state file, say): the victim keeps its KV
            // and its sequence, rather than the sequence belonging to no one.
            if ((victim.residency as WorkspaceResidency).kind === "none") {
                // #swapOut set it during the awaits
                victim.residency = { kind: "resident", slot };
            }
            throw error;
        } finally {
            victim.busy = false;
            this.onIdle();
        }
        return slot;
    }

    /** Writes an idle workspace's KV into sealed pages it owns; without room, its KV is dropped and recomputed later. */
    async #swapOut(victim: WorkspaceRecord, slot: SequenceSlot): Promise<void> {
        victim.residency = { kind: "none" };
        if (!this.canSwap || slot.numTokens === 0) {
            return;
        } // unified mode pages nothing: the workspace recomputes from its history
        const numPages = this.transfer.numPagesFor(slot.numTokens);
        let room = this.makeRoom(numPages);
        // pages released a moment ago may be being zeroed off the engine's thread; a page wait the
        // scheduler grants meanwhile may take them first, so the room is asked for again (bounded)
        for (let attempt = 0; room === "zeroing" && attempt < MAX_ROOM_ATTEMPTS; attempt++) {
            await this.pool.whenZeroed();
            room = this.makeRoom(numPages);
        }
        if (room !== "free") {
            this.counters.swapDrops++;
            return;
        }
        const holder = swapId(victim.id, ++victim.numSwapOuts);
        const reservation = this.pool.reserve({ workspace: victim.id, holder, numPages, firstToken: 0 });
        this.#swapOutsInFlight.set(holder, reservation.generation);
        try {
            const manifest = await this.transfer.writeFrom(reservation, sequenceStateSource(this.decode, slot, `swap-${victim.id}`));
            victim.residency = { kind: "swapped", reservation, manifest };
            this.counters.swapOuts++;
            this.events.record({
                kind: "swappedOut",
                workspace: victim.id,
                requestId: holder,
                pages: [...manifest.pages],
                pageState: "sealed",
                generation: reservation.generation,
                numTokens: manifest.tokens.length,
                outcome: "ok",
                detail: `${manifest.tokens.length} tokens from decode sequence ${slot.index}`
            });
        } catch (error) {
            this.pool.release(reservation);
            throw error;
        } finally {
            this.#swapOutsInFlight.delete(holder);
        }
    }

    /**
     * Takes back swapped, idle workspaces' pages (least recently used first) until `numPages` can be
     * reserved, counting pages being zeroed off the engine's thread as free: "free" when they can be
     * now, "zeroing" once those pages are zeroed (`PagePool.whenZeroed`), "none" when they cannot.
     */
    makeRoom(numPages: number): "free" | "zeroing" | "none" {
        const drops = planRoom(numPages, this.pool.numFreePages + this.pool.numPagesZeroing, reclaimableSwaps(this.all()));
        if (drops === undefined) {
            return "none";
        }
        // the pages taken back are zeroed at once: nothing else can take them before the caller reserves
        this.dropSwaps(
            drops.map((swapped) => swapped.workspace),
            { zeroNow: true }
        );
        if (this.pool.canReserve(numPages)) {
            return "free";
        }
        return this.pool.numPagesZeroing > 0 ? "zeroing" : "none";
    }

    /** Releases these swapped workspaces' pages; each will recompute its KV from its history on its next turn. */
    dropSwaps(workspaces: readonly WorkspaceRecord[], { zeroNow = false }: { readonly zeroNow?: boolean } = {}): void {
        for (const workspace of workspaces) {
            invariant(
                workspace.residency.kind === "swapped" && !workspace.busy,
                () => `pages of workspace ${workspace.id} are taken back while it is ${workspace.busy ? "busy" : workspace.residency.kind}`
            );
            this.#releaseSwapPages(workspace, zeroNow);
            this.counters.swapDrops++;
        }
    }

    #releaseSwapPages(workspace: WorkspaceRecord, zeroNow = false): void {
        if (workspace.residency.kind !== "swapped") {
            return;
        }
        const released = this.pool.release(workspace.residency.reservation, { zeroNow });
        invariant(released.ok, () => `swap pages of ${workspace.id} released twice`);
        workspace.residency = { kind: "none" };
    }

    async dropKv(workspace: WorkspaceRecord): Promise<void> {
        if (workspace.residency.kind === "resident") {
            await this.decode.releaseSequence(workspace.residency.slot);
        }
        this.#releaseSwapPages(workspace);
        workspace.residency = { kind: "none" };
    }

    /** Forgets a workspace's KV: its decode sequence is cleared and its pages scrubbed. Not while a turn of it runs. */
    async forget(id: WorkspaceId): Promise<void> {
        const workspace = this.#workspaces.get(id);
        if (workspace === undefined) {
            return;
        }
        invariant(!workspace.busy, () => `workspace ${id} is forgotten while a turn runs`);
        await this.dropKv(workspace);
        this.#workspaces.delete(id);
    }

    /** Forgets every workspace that runs no turn now. */
    async forgetAll(): Promise<void> {
        for (const workspace of this.all()) {
            if (!workspace.busy) {
                await this.forget(workspace.id);
            }
        }
    }
}
