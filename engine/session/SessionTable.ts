import type { SessionId } from "../core/ids.js";
import { requestId as toRequestId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { EngineCounters } from "../engineTypes.js";
import type { PageTransfer, TransferTarget } from "../handoff/PageTransfer.js";
import type { PagePool } from "../pages/PagePool.js";
import type { RoleContext } from "../runtime/RoleContext.js";
import type { SequenceSlot } from "../runtime/SequenceSlot.js";
import { SessionRecord, type SessionResidency } from "./SessionRecord.js";

/**
 * Where every workspace's KV is: resident in a decode sequence, swapped out into sealed pages it
 * owns, or nowhere. More workspaces than decode sequences share them least-recently-used first;
 * a swapped workspace comes back byte-verified, without recompute.
 */
export class SessionTable {
    readonly #sessions = new Map<SessionId, SessionRecord>();

    constructor(
        private readonly decode: RoleContext,
        private readonly pool: PagePool,
        private readonly transfer: PageTransfer,
        private readonly target: TransferTarget | undefined,
        private readonly counters: EngineCounters,
        /** Called when a workspace that was busy moving its KV can take turns again. */
        private readonly onIdle: () => void
    ) {}

    /** Unified mode pages nothing: an evicted workspace recomputes from its history. */
    private get canSwap(): boolean {
        return this.target !== undefined;
    }

    all(): readonly SessionRecord[] {
        return [...this.#sessions.values()];
    }

    get(id: SessionId): SessionRecord {
        let session = this.#sessions.get(id);
        if (session === undefined) {
            session = new SessionRecord(id);
            this.#sessions.set(id, session);
        }
        return session;
    }

    /** The workspace's decode sequence: where it is resident, swapped back in, or a free one. */
    async residentSlot(label: string, session: SessionRecord): Promise<SequenceSlot> {
        const residency = session.residency;
        if (residency.kind === "resident") {
            return residency.slot;
        }
        const slot = await this.#freeSlot();
        if (residency.kind === "swapped") {
            try {
                const state = this.transfer.read(
                    residency.manifest,
                    {
                        request: residency.reservation.request,
                        session: session.id,
                        generation: residency.reservation.generation,
                        tokens: residency.manifest.tokens
                    },
                    this.target!
                );
                await this.decode.importState(slot, state, label);
                this.counters.swapIns++;
                session.numSwapIns++;
            } catch (error) {
                await this.decode.releaseSequence(slot);
                throw error;
            } finally {
                this.#releaseSwapPages(session);
            }
        }
        session.residency = { kind: "resident", slot };
        return slot;
    }

    /** A free decode sequence, swapping the least recently used idle workspace out into pages if none is free. */
    async #freeSlot(): Promise<SequenceSlot> {
        const free = this.decode.acquireSequence();
        if (free !== undefined) {
            return free;
        }
        const victim = [...this.#sessions.values()]
            .filter((session) => session.residency.kind === "resident" && !session.busy)
            .sort((a, b) => a.lastUsed - b.lastUsed)[0];
        invariant(
            victim !== undefined && victim.residency.kind === "resident",
            () =>
                `no decode sequence free and no idle resident workspace among ${this.#sessions.size} on ${this.decode.numSequences} sequences`
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
            if ((victim.residency as SessionResidency).kind === "none") {
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
    async #swapOut(victim: SessionRecord, slot: SequenceSlot): Promise<void> {
        victim.residency = { kind: "none" };
        if (!this.canSwap || slot.numTokens === 0) {
            return;
        } // unified mode pages nothing: the workspace recomputes from its history
        const state = await this.decode.exportState(slot, `swap-${victim.id}`);
        const numPages = this.transfer.numPagesFor(state.numCells);
        if (!this.makeRoom(numPages)) {
            this.counters.swapDrops++;
            return;
        }
        const reservation = this.pool.reserve({
            session: victim.id,
            request: toRequestId(`swap-${victim.id}-${++victim.numSwapOuts}`),
            numPages,
            firstToken: 0
        });
        try {
            const manifest = await this.transfer.write(reservation, state);
            victim.residency = { kind: "swapped", reservation, manifest };
            this.counters.swapOuts++;
        } catch (error) {
            this.pool.release(reservation);
            throw error;
        }
    }

    /** Frees pages held by swapped, idle workspaces (least recently used first) until `numPages` can be reserved. */
    makeRoom(numPages: number): boolean {
        const swapped = [...this.#sessions.values()]
            .filter((session) => session.residency.kind === "swapped" && !session.busy)
            .sort((a, b) => a.lastUsed - b.lastUsed);
        while (!this.pool.canReserve(numPages)) {
            const session = swapped.shift();
            if (session === undefined) {
                return false;
            }
            this.#releaseSwapPages(session);
            this.counters.swapDrops++;
        }
        return true;
    }

    #releaseSwapPages(session: SessionRecord): void {
        if (session.residency.kind !== "swapped") {
            return;
        }
        const released = this.pool.release(session.residency.reservation);
        invariant(released.ok, () => `swap pages of ${session.id} released twice`);
        session.residency = { kind: "none" };
    }

    async dropKv(session: SessionRecord): Promise<void> {
        if (session.residency.kind === "resident") {
            await this.decode.releaseSequence(session.residency.slot);
        }
        this.#releaseSwapPages(session);
        session.residency = { kind: "none" };
    }

    /** Forgets a workspace's KV: its decode sequence is cleared and its pages scrubbed. Not while a turn of it runs. */
    async forget(id: SessionId): Promise<void> {
        const session = this.#sessions.get(id);
        if (session === undefined) {
            return;
        }
        invariant(!session.busy, () => `workspace ${id} is forgotten while a turn runs`);
        await this.dropKv(session);
        this.#sessions.delete(id);
    }

    async forgetAll(): Promise<void> {
        for (const session of [...this.#sessions.values()]) {
            if (!session.busy) {
                await this.forget(session.id);
            }
        }
    }
}
