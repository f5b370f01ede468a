import { afterEach, describe, expect, it, vi } from "vitest";
import { requestId, type RequestId, type WorkspaceId } from "../../../../engine/core/ids.js";
import type { Reservation } from "../../../../engine/pages/Reservation.js";
import { EngineStoppedError, RequestCancelledError } from "../../../../engine/request/requestErrors.js";
import { PAGE_WAIT_MS } from "../../../../engine/scheduler/TurnScheduler.js";
import { expectPoolDrained, nextPass, runTurn, schedulingStack, settle, ws, type SchedulingStack } from "./schedulerFixtures.js";

// The scheduler over the real pool, transfer and workspace table, with a fake decode context: every
// grant, queue and page decision, without a model. Timers are faked wherever a page wait is
// involved, so a wait that ends proves it was woken by an event, never by a timer that polls.

const TIMERS: Parameters<typeof vi.useFakeTimers>[0] = {
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"]
};

/** Reserves `numPages` for `holder` in `workspace` when the scheduler says so, noting the order. */
function taker(
    stack: SchedulingStack,
    holder: RequestId,
    numPages: number,
    order: string[],
    workspace: WorkspaceId = ws("w")
): () => Reservation {
    return () => {
        order.push(holder);
        return stack.pool.reserve({ workspace, holder, numPages, firstToken: 0 });
    };
}

afterEach(() => {
    vi.useRealTimers();
});

describe("TurnScheduler: turns", () => {
    it("grants as many turns as there are decode sequences, queues the rest in fair order, and grants them as turns end", async () => {
        const { scheduler } = schedulingStack({ numSequences: 2 });
        const a = await scheduler.acquireTurn({ workspace: ws("a") });
        const b = await scheduler.acquireTurn({ workspace: ws("b") });
        expect([a.busy, b.busy, scheduler.numRunning]).toEqual([true, true, 2]);

        const positions: number[] = [];
        const granted: string[] = [];
        const ask = (workspace: string, name: string): Promise<unknown> =>
            scheduler
                .acquireTurn({ workspace: ws(workspace), onQueued: (position) => positions.push(position) })
                .then((record) => granted.push(name) && record);
        const c1 = ask("c", "c1");
        const c2 = ask("c", "c2");
        const d = ask("d", "d");
        expect(positions).toEqual([1, 2, 3]);
        expect(scheduler.numQueued).toBe(3);

        scheduler.endTurn(a);
        await nextPass();
        expect(granted).toEqual(["c1"]);
        // c runs a turn: its second waits, and d, which arrived later, goes first.
        scheduler.endTurn(b);
        await nextPass();
        expect(granted).toEqual(["c1", "d"]);
        scheduler.endTurn((await c1) as never);
        await nextPass();
        expect(granted).toEqual(["c1", "d", "c2"]);
        scheduler.endTurn((await d) as never);
        scheduler.endTurn((await c2) as never);
        expect([scheduler.numRunning, scheduler.numQueued]).toEqual([0, 0]);
    });

    it("keeps a second turn of a busy workspace waiting, though a sequence is free", async () => {
        const { scheduler } = schedulingStack({ numSequences: 2 });
        const first = await scheduler.acquireTurn({ workspace: ws("a") });
        let secondGranted = false;
        const second = scheduler.acquireTurn({ workspace: ws("a") }).then((record) => {
            secondGranted = true;
            return record;
        });
        await nextPass();
        expect([secondGranted, scheduler.numRunning, scheduler.numQueued]).toEqual([false, 1, 1]);
        scheduler.endTurn(first);
        await nextPass();
        expect(secondGranted).toBe(true);
        scheduler.endTurn(await second);
    });

    it("takes a cancelled turn out of the queue: it rejects as cancelled while admitted, and the next moves up", async () => {
        const { scheduler } = schedulingStack({ numSequences: 1 });
        const running = await scheduler.acquireTurn({ workspace: ws("a") });
        const controller = new AbortController();
        const cancelled = scheduler.acquireTurn({ workspace: ws("b"), signal: controller.signal });
        const positions: number[] = [];
        const next = scheduler.acquireTurn({ workspace: ws("c"), onQueued: (position) => positions.push(position) });
        expect(positions).toEqual([2]);
        controller.abort();
        await expect(cancelled).rejects.toThrow(new RequestCancelledError("admitted"));
        expect(scheduler.numQueued).toBe(1);
        scheduler.endTurn(running);
        const record = await next;
        expect(record.id).toBe(ws("c"));
        scheduler.endTurn(record);
    });

    it("stops: every waiting turn and page wait fails with the engine's error, and nothing is granted afterwards", async () => {
        const stack = schedulingStack({ numSequences: 1, numPages: 4 });
        const { scheduler, pool } = stack;
        const running = await scheduler.acquireTurn({ workspace: ws("a") });
        const waiting = scheduler.acquireTurn({ workspace: ws("b") });
        const held = pool.reserve({ workspace: ws("a"), holder: requestId("held"), numPages: 4, firstToken: 0 });
        const order: string[] = [];
        const pages = scheduler.reservePages(requestId("r1"), 2, taker(stack, requestId("r1"), 2, order));
        const stopped = new EngineStoppedError("The engine stopped.");
        scheduler.stop(stopped);
        await expect(waiting).rejects.toBe(stopped);
        await expect(pages).rejects.toBe(stopped);
        await expect(scheduler.acquireTurn({ workspace: ws("c") })).rejects.toBe(stopped);
        pool.release(held);
        scheduler.endTurn(running);
        await nextPass();
        expect(order).toEqual([]);
        expectPoolDrained(pool);
    });
});

describe("TurnScheduler: page waits", () => {
    it("are met in the call itself when the pool has room: the pages are taken before the promise settles", async () => {
        const stack = schedulingStack();
        const order: string[] = [];
        const reservation = stack.scheduler.reservePages(requestId("r1"), 3, taker(stack, requestId("r1"), 3, order));
        expect(order).toEqual(["r1"]);
        expect(stack.pool.numFreePages).toBe(13);
        stack.pool.release(await reservation);
        expectPoolDrained(stack.pool);
    });

    it("wait, without polling, until a release frees the pages, then are met first come first served", async () => {
        vi.useFakeTimers(TIMERS);
        const stack = schedulingStack({ numPages: 16 });
        const { pool, scheduler } = stack;
        const held = pool.reserve({ workspace: ws("x"), holder: requestId("held"), numPages: 14, firstToken: 0 });
        const order: string[] = [];
        const first = scheduler.reservePages(requestId("r1"), 3, taker(stack, requestId("r1"), 3, order));
        // One page would fit, but r2 came after r1: a large handoff is not starved by small ones.
        const second = scheduler.reservePages(requestId("r2"), 1, taker(stack, requestId("r2"), 1, order));
        await settle();
        expect([order, scheduler.numPageWaits]).toEqual([[], 2]);

        pool.release(held);
        expect(order).toEqual([]); // woken once the pool's call has returned, not inside it
        await settle();
        expect(order).toEqual(["r1", "r2"]);
        expect(vi.getTimerCount()).toBe(0); // each wait's deadline was cleared
        pool.release(await first);
        pool.release(await second);
        expectPoolDrained(pool);
    });

    it("are woken when the last lease on a quarantined page drains", async () => {
        vi.useFakeTimers(TIMERS);
        const stack = schedulingStack({ numPages: 2 });
        const { pool, scheduler } = stack;
        const held = pool.reserve({ workspace: ws("x"), holder: requestId("held"), numPages: 2, firstToken: 0 });
        const leased = pool.acquireWriteLease(held.pages[0]!.pageId, held.generation);
        expect(leased.ok).toBe(true);
        const order: string[] = [];
        const waiting = scheduler.reservePages(requestId("r1"), 2, taker(stack, requestId("r1"), 2, order));
        pool.release(held); // one page is still leased: quarantined, not free
        await settle();
        expect(order).toEqual([]);
        if (leased.ok) {
            leased.lease.release();
        }
        await settle();
        expect(order).toEqual(["r1"]);
        pool.release(await waiting);
        expectPoolDrained(pool);
    });

    it("give up after the bounded wait with the numbers, having reserved nothing", async () => {
        vi.useFakeTimers(TIMERS);
        const stack = schedulingStack({ numPages: 16 });
        const held = stack.pool.reserve({ workspace: ws("x"), holder: requestId("held"), numPages: 15, firstToken: 0 });
        const order: string[] = [];
        const waiting = stack.scheduler.reservePages(requestId("r1"), 3, taker(stack, requestId("r1"), 3, order));
        const outcome = expect(waiting).rejects.toMatchObject({
            code: "engine_busy",
            message:
                "The handoff needs 3 pages and only 1 of 16 came free in 60 s (running requests hold the rest). Retry, or give the pool more pages."
        });
        await vi.advanceTimersByTimeAsync(PAGE_WAIT_MS);
        await outcome;
        expect([order, stack.scheduler.numPageWaits]).toEqual([[], 0]);
        stack.pool.release(held);
        expectPoolDrained(stack.pool);
    });

    it("end with their request: an abandoned wait rejects with the request's error and never takes its pages", async () => {
        const stack = schedulingStack({ numPages: 4 });
        const held = stack.pool.reserve({ workspace: ws("x"), holder: requestId("held"), numPages: 4, firstToken: 0 });
        const order: string[] = [];
        const waiting = stack.scheduler.reservePages(requestId("r1"), 2, taker(stack, requestId("r1"), 2, order));
        const cancelled = new RequestCancelledError("transferring");
        stack.scheduler.abandonPages(requestId("r1"), cancelled);
        await expect(waiting).rejects.toBe(cancelled);
        stack.pool.release(held);
        await settle();
        expect([order, stack.scheduler.numPageWaits]).toEqual([[], 0]);
        expectPoolDrained(stack.pool);
    });

    it("reject with the take's own error when its request ended before the room came", async () => {
        const stack = schedulingStack();
        const ended = new RequestCancelledError("prefilling");
        await expect(
            stack.scheduler.reservePages(requestId("r1"), 1, () => {
                throw ended;
            })
        ).rejects.toBe(ended);
        expectPoolDrained(stack.pool);
    });

    it("take back idle swapped workspaces' pages, least recently used first, and only when that makes the room", async () => {
        vi.useFakeTimers(TIMERS);
        const stack = schedulingStack({ numSequences: 1, numPages: 16 });
        const { pool, scheduler, workspaces, counters } = stack;
        // One decode sequence: each new workspace swaps the previous one out into 2 pages (8 tokens).
        await runTurn(stack, ws("a"), 8);
        await runTurn(stack, ws("b"), 8);
        await runTurn(stack, ws("c"), 8);
        const residency = (name: string): string => workspaces.get(ws(name)).residency.kind;
        expect([residency("a"), residency("b"), residency("c"), pool.numFreePages, counters.swapOuts]).toEqual([
            "swapped",
            "swapped",
            "resident",
            12,
            2
        ]);
        expect(stack.decode.numUnreleasedStates).toBe(0); // each swap gave its exported state's memory back

        // 15 pages with 2 held elsewhere: even both swaps would not make the room, so neither is dropped.
        const held = pool.reserve({ workspace: ws("x"), holder: requestId("held"), numPages: 2, firstToken: 0 });
        const order: string[] = [];
        const tooBig = scheduler.reservePages(requestId("too-big"), 15, taker(stack, requestId("too-big"), 15, order));
        await settle();
        expect([order, residency("a"), residency("b"), counters.swapDrops]).toEqual([[], "swapped", "swapped", 0]);
        const ended = new RequestCancelledError("transferring");
        scheduler.abandonPages(requestId("too-big"), ended);
        await expect(tooBig).rejects.toBe(ended);

        // 11 pages: 10 are free, and a's 2 (a ran least recently) make the room; b keeps its pages.
        const big = scheduler.reservePages(requestId("big"), 11, taker(stack, requestId("big"), 11, order));
        expect([order, residency("a"), residency("b"), counters.swapDrops]).toEqual([["big"], "none", "swapped", 1]);
        pool.release(held);
        pool.release(await big);
        await workspaces.forgetAll();
        expectPoolDrained(pool);
    });
});
