import { expect } from "vitest";
import { layoutFingerprint } from "../../../../engine/codec/KvLayout.js";
import { workspaceId, type WorkspaceId } from "../../../../engine/core/ids.js";
import { createEngineCounters, type EngineCounters } from "../../../../engine/engineTypes.js";
import { PageTransfer } from "../../../../engine/handoff/PageTransfer.js";
import { bytesPerToken } from "../../../../engine/codec/KvLayout.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import { assertAuditClean } from "../../../support/assertAuditClean.js";
import { TurnScheduler } from "../../../../engine/scheduler/TurnScheduler.js";
import { WorkspaceTable } from "../../../../engine/workspace/WorkspaceTable.js";
import { FAKE_LAYOUT, FakeRoleContext } from "../../../support/FakeRoleContext.js";

export const PAGE_TOKENS = 4;

/** The engine's scheduling parts over a fake decode context: the real pool, transfer, workspace table and scheduler. */
export interface SchedulingStack {
    readonly pool: PagePool;
    readonly decode: FakeRoleContext;
    readonly transfer: PageTransfer;
    readonly workspaces: WorkspaceTable;
    readonly scheduler: TurnScheduler;
    readonly counters: EngineCounters;
}

export function schedulingStack(options: { numSequences?: number; numPages?: number; sliceBudgetMs?: number } = {}): SchedulingStack {
    const numSequences = options.numSequences ?? 2;
    const pool = new PagePool({
        numPages: options.numPages ?? 16,
        pageTokens: PAGE_TOKENS,
        pageBytes: PAGE_TOKENS * bytesPerToken(FAKE_LAYOUT)
    });
    const decode = new FakeRoleContext("decode", numSequences, 64);
    const counters = createEngineCounters();
    const transfer = new PageTransfer(
        pool,
        FAKE_LAYOUT,
        layoutFingerprint(FAKE_LAYOUT, "fake"),
        {},
        counters,
        undefined,
        options.sliceBudgetMs
    );
    const target = { layout: FAKE_LAYOUT, numStreams: numSequences };
    const workspaces = new WorkspaceTable(decode, pool, transfer, target, counters, () => scheduler.requestSchedule());
    const scheduler = new TurnScheduler(workspaces, pool, numSequences);
    return { pool, decode, transfer, workspaces, scheduler, counters };
}

export const ws = (name: string): WorkspaceId => workspaceId(name);

/** Lets every queued microtask run (the scheduler wakes page waits in one once a pool call has returned). */
export async function settle(): Promise<void> {
    for (let round = 0; round < 10; round++) {
        await Promise.resolve();
    }
}

/** Lets the scheduler's next pass run (it grants turns once the step that ended one is over). */
export async function nextPass(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    await settle();
}

/** A whole turn of `workspace`: granted, resident, `numTokens` evaluated in place, ended. */
export async function runTurn(stack: SchedulingStack, workspace: WorkspaceId, numTokens: number): Promise<void> {
    const record = await stack.scheduler.acquireTurn({ workspace });
    try {
        const slot = await stack.workspaces.residentSlot(record, `turn-${workspace}`);
        await stack.decode.evaluate(
            slot,
            Array.from({ length: numTokens }, (_, index) => 10 + index)
        );
    } finally {
        stack.scheduler.endTurn(record);
    }
}

/** Every page free, no lease, the pool's invariants intact. */
export function expectPoolDrained(pool: PagePool): void {
    expect(pool.numLiveReservations).toBe(0);
    expect(pool.numActiveLeases).toBe(0);
    expect(pool.numFreePages).toBe(pool.config.numPages);
    assertAuditClean(pool.audit({ scanFreePages: true }));
}
