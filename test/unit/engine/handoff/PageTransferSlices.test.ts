import { describe, expect, it } from "vitest";
import { bytesPerToken, layoutFingerprint } from "../../../../engine/codec/KvLayout.js";
import { requestId, workspaceId } from "../../../../engine/core/ids.js";
import { PageTransfer } from "../../../../engine/handoff/PageTransfer.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import type { ExportedState } from "../../../../engine/runtime/RoleContext.js";
import { FAKE_LAYOUT, FakeRoleContext } from "../../../support/FakeRoleContext.js";
import { expectPoolDrained, PAGE_TOKENS } from "../scheduler/schedulerFixtures.js";

// A transfer's write gives the event loop back between layers and between pages, so streams beside
// a long prompt's handoff are not held for the whole copy; over the real pool and a fake context's
// real llama.cpp-format state.

const NUM_TOKENS = 10; // 3 pages of 4 tokens
const NUM_PAGES = Math.ceil(NUM_TOKENS / PAGE_TOKENS);

async function stack(sliceBudgetMs: number) {
    const pool = new PagePool({ numPages: 8, pageTokens: PAGE_TOKENS, pageBytes: PAGE_TOKENS * bytesPerToken(FAKE_LAYOUT) });
    const transfer = new PageTransfer(pool, FAKE_LAYOUT, layoutFingerprint(FAKE_LAYOUT, "fake"), {}, undefined, undefined, sliceBudgetMs);
    const prefill = new FakeRoleContext("prefill", 1, 64, FAKE_LAYOUT, 1);
    const slot = prefill.acquireSequence()!;
    await prefill.evaluate(
        slot,
        Array.from({ length: NUM_TOKENS }, (_, index) => 100 + index)
    );
    const state: ExportedState = await prefill.exportState(slot);
    const reservation = pool.reserve({ workspace: workspaceId("alice"), holder: requestId("r1"), numPages: NUM_PAGES, firstToken: 0 });
    return { pool, transfer, state, reservation };
}

/** Counts the turns of the event loop that run while `work` is pending. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: PromiseSettledResult<T>; numTurns: number }> {
    let numTurns = 0;
    let running = true;
    const tick = (): void => {
        if (running) {
            numTurns++;
            setImmediate(tick);
        }
    };
    setImmediate(tick);
    const [result] = await Promise.allSettled([work()]);
    running = false;
    return { result: result!, numTurns };
}

describe("PageTransfer's write in time slices", () => {
    it("gives the event loop back between layers and before each page's seal when its slices are spent, and seals the same pages", async () => {
        const sliced = await stack(0);
        const { result, numTurns } = await turnsDuring(() => sliced.transfer.write(sliced.reservation, sliced.state));
        expect(result.status).toBe("fulfilled");
        expect(numTurns).toBeGreaterThanOrEqual(FAKE_LAYOUT.layers.length - 1 + NUM_PAGES); // never after the last seal

        const whole = await stack(1e9);
        const once = await turnsDuring(() => whole.transfer.write(whole.reservation, whole.state));
        expect(once.numTurns).toBe(0); // within its slice: one synchronous piece, as before
        const checksums = (settled: PromiseSettledResult<{ checksums: readonly bigint[] }>) =>
            settled.status === "fulfilled" ? settled.value.checksums : [];
        expect(checksums(result)).toHaveLength(NUM_PAGES);
        expect(checksums(result)).toEqual(checksums(once.result));
    });

    it("writes and seals nothing more once its request released the pages during a pause; the pages come back zeroed", async () => {
        const { pool, transfer, state, reservation } = await stack(0);
        const writing = transfer.write(reservation, state);
        await new Promise<void>((resolve) => setImmediate(resolve)); // the first layer is in, the write is paused
        expect(pool.release(reservation).ok).toBe(true); // the request was cancelled
        await expect(writing).rejects.toThrow();
        expect(pool.counters.staleWritesRefused).toBe(1); // the next layer's write, refused: nothing was sealed
        state.release();
        expectPoolDrained(pool);
    });
});
