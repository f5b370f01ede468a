import { describe, expect, it } from "vitest";
import { bytesPerToken, layoutFingerprint } from "../../../../engine/codec/KvLayout.js";
import { requestId, workspaceId, type WorkspaceId } from "../../../../engine/core/ids.js";
import { InvariantError } from "../../../../engine/core/invariant.js";
import { skippingScrubber, stubPrefillOverflow } from "../../../../engine/drills/leakyPolicies.js";
import { leakyReader } from "../../../../engine/drills/leakyReader.js";
import { createEngineCounters, type RequestTimings } from "../../../../engine/engineTypes.js";
import { Handoff } from "../../../../engine/handoff/Handoff.js";
import { PageTransfer, type PageTransferHooks } from "../../../../engine/handoff/PageTransfer.js";
import { refusePrefillOverflow, type PrefillOverflowPolicy } from "../../../../engine/handoff/PrefillOverflowPolicy.js";
import type { TransferReader } from "../../../../engine/handoff/TransferReader.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import type { PageScrubber } from "../../../../engine/pages/PageScrubber.js";
import { RequestRecord } from "../../../../engine/request/RequestRecord.js";
import { TurnScheduler } from "../../../../engine/scheduler/TurnScheduler.js";
import { WorkspaceTable } from "../../../../engine/workspace/WorkspaceTable.js";
import { FAKE_LAYOUT, FakeRoleContext, type FakeSequenceSlot } from "../../../support/FakeRoleContext.js";
import { expectPoolDrained, PAGE_TOKENS } from "../scheduler/schedulerFixtures.js";

// Prefill → pages → verified decode load, with fake contexts over the real pool, transfer and
// scheduler. The fake decode checks every row it loads against its tokens, so KV that is not the
// request's own, or that changed on the way, is counted, not missed.

interface Policies {
    readonly prefillOverflow?: PrefillOverflowPolicy;
    readonly reader?: TransferReader;
    readonly scrubber?: PageScrubber;
}

function handoffStack(options: { prefillCapacity?: number; numPrefillSequences?: number; policies?: Policies } = {}) {
    const policies = options.policies ?? {};
    const pool = new PagePool(
        { numPages: 32, pageTokens: PAGE_TOKENS, pageBytes: PAGE_TOKENS * bytesPerToken(FAKE_LAYOUT) },
        { ...(policies.scrubber ? { scrubber: policies.scrubber } : {}) }
    );
    const prefill = new FakeRoleContext("prefill", options.numPrefillSequences ?? 1, options.prefillCapacity ?? 64, FAKE_LAYOUT, 1);
    const decode = new FakeRoleContext("decode", 3, 64);
    const counters = createEngineCounters();
    const hooks: PageTransferHooks = {};
    const transfer = new PageTransfer(pool, FAKE_LAYOUT, layoutFingerprint(FAKE_LAYOUT, "fake"), hooks, counters, policies.reader);
    const target = { layout: FAKE_LAYOUT, numStreams: 2 };
    const workspaces = new WorkspaceTable(decode, pool, transfer, target, counters, () => scheduler.requestSchedule());
    const scheduler = new TurnScheduler(workspaces, pool, 3);
    const handoff = new Handoff({
        prefill,
        decode,
        pool,
        transfer,
        pages: scheduler,
        prefillOverflow: policies.prefillOverflow ?? refusePrefillOverflow,
        hooks
    });
    const stages: string[] = [];
    const request = (name: string, workspace: WorkspaceId = workspaceId("alice")): RequestRecord =>
        new RequestRecord(requestId(name), workspace, pool, {
            onStage: (_id, status) => stages.push(status.kind),
            onTerminal: () => undefined
        });
    const timings = (): RequestTimings => ({ prefillMs: 0, handoffMs: 0, timeToFirstTokenMs: 0, decodeMs: 0 });
    const decodeSlot = (): FakeSequenceSlot => decode.acquireSequence() as FakeSequenceSlot;
    return { pool, prefill, decode, hooks, handoff, stages, request, timings, decodeSlot, counters };
}

const PROMPT = Array.from({ length: 10 }, (_, index) => 100 + index);

describe("Handoff", () => {
    it("hands a prompt from prefill to decode through verified pages: decode holds exactly its KV, and every page is free again", async () => {
        const stack = handoffStack();
        const record = stack.request("r1");
        const slot = stack.decodeSlot();
        await stack.handoff.run(record, workspaceId("alice"), slot, PROMPT, 0, stack.timings());
        expect(slot.tokens).toEqual(PROMPT.slice(0, -1)); // decode evaluates the last token itself
        expect(slot.numForeignRows).toBe(0);
        expect(stack.prefill.evaluations).toEqual([9]);
        expect(stack.stages).toEqual(["prefilling", "transferring"]);
        expect(stack.prefill.numFreeSequences).toBe(1);
        expect(stack.pool.counters.numReservations).toBe(1);
        expect(stack.prefill.numUnreleasedStates).toBe(0); // the exported state's memory went back once its bytes were in pages
        expectPoolDrained(stack.pool);
    });

    it("with history: the workspace's KV goes to prefill through pages, and only the new tokens are evaluated", async () => {
        const stack = handoffStack();
        const slot = stack.decodeSlot();
        await stack.decode.evaluate(slot, PROMPT.slice(0, 6));
        await stack.handoff.run(stack.request("r1"), workspaceId("alice"), slot, PROMPT, 6, stack.timings());
        expect(stack.prefill.evaluations).toEqual([3]);
        expect(slot.tokens).toEqual(PROMPT.slice(0, -1));
        expect(slot.numForeignRows).toBe(0);
        expect(stack.pool.counters.numReservations).toBe(2); // the history to prefill, then the whole sequence back
        expect([stack.decode.numUnreleasedStates, stack.prefill.numUnreleasedStates]).toEqual([0, 0]);
        expectPoolDrained(stack.pool);
    });

    it("refuses a manifest that is not the request's own before decode loads a byte", async () => {
        const stack = handoffStack();
        stack.hooks.afterSeal = (manifest) => ({ ...manifest, holder: requestId("someone-else") });
        const record = stack.request("r1");
        const slot = stack.decodeSlot();
        const failed = stack.handoff.run(record, workspaceId("alice"), slot, PROMPT, 0, stack.timings());
        await expect(failed).rejects.toMatchObject({ code: "handoff_page_owner_mismatch" });
        expect(slot.tokens).toEqual([]);
        record.finish({ kind: "failed", error: new Error("refused") }); // what the request runner does with the error
        expectPoolDrained(stack.pool);
    });

    it("ends on a cancel during the transfer: the late write is refused, nothing is loaded, and the pages come back once the lease drains", async () => {
        const stack = handoffStack();
        const record = stack.request("r1");
        stack.hooks.beforeTransferWrite = async () => {
            delete stack.hooks.beforeTransferWrite;
            record.finish({ kind: "cancelled" }); // the pages are released while the writer holds its leases
            expect(stack.pool.numFreePages).toBeLessThan(stack.pool.config.numPages);
        };
        const slot = stack.decodeSlot();
        await expect(stack.handoff.run(record, workspaceId("alice"), slot, PROMPT, 0, stack.timings())).rejects.toMatchObject({
            code: "page_released"
        });
        expect(stack.pool.counters.staleWritesRefused).toBe(1);
        expect(slot.tokens).toEqual([]);
        expect(stack.prefill.numUnreleasedStates).toBe(0); // released on the failed path too
        expectPoolDrained(stack.pool);
    });

    it("saved straight into the pages where the contexts can: decode holds exactly its KV, no state is exported whole, history included", async () => {
        const stack = handoffStack();
        stack.prefill.saveIntoPages();
        stack.decode.saveIntoPages();
        const slot = stack.decodeSlot();
        await stack.decode.evaluate(slot, PROMPT.slice(0, 6));
        await stack.handoff.run(stack.request("r1"), workspaceId("alice"), slot, PROMPT, 6, stack.timings());
        expect(slot.tokens).toEqual(PROMPT.slice(0, -1));
        expect(slot.numForeignRows).toBe(0);
        expect([stack.decode.numSavedIntoPages, stack.prefill.numSavedIntoPages]).toEqual([1, 1]); // the history, then the whole sequence
        expect([stack.decode.numUnreleasedStates, stack.prefill.numUnreleasedStates]).toEqual([0, 0]);
        expect(stack.prefill.numFreeSequences).toBe(1);
        expectPoolDrained(stack.pool);
    });

    it("ends on a cancel while llama.cpp writes into the pages: the write is not recorded, nothing is loaded, and the pages are zeroed before reuse", async () => {
        const stack = handoffStack();
        const record = stack.request("r1");
        stack.prefill.saveIntoPages(async () => {
            record.finish({ kind: "cancelled" }); // the pages are released while the writer holds its leases
            expect(stack.pool.numFreePages).toBeLessThan(stack.pool.config.numPages);
        });
        const slot = stack.decodeSlot();
        await expect(stack.handoff.run(record, workspaceId("alice"), slot, PROMPT, 0, stack.timings())).rejects.toMatchObject({
            code: "page_released"
        });
        expect(stack.pool.counters.staleWritesRefused).toBe(1);
        expect(stack.prefill.numSavedIntoPages).toBe(1); // the bytes were written, into pages no one else could have
        expect(slot.tokens).toEqual([]);
        expect(stack.prefill.numFreeSequences).toBe(1);
        expectPoolDrained(stack.pool); // every page free and all zero again
    });

    it("in place, a cancel while the transport is slow: llama.cpp's write lands in pages the lease keeps quarantined, and is refused", async () => {
        const stack = handoffStack();
        stack.prefill.saveIntoPages();
        const record = stack.request("r1");
        stack.hooks.beforeTransferWrite = async () => {
            delete stack.hooks.beforeTransferWrite;
            record.finish({ kind: "cancelled" });
        };
        const slot = stack.decodeSlot();
        await expect(stack.handoff.run(record, workspaceId("alice"), slot, PROMPT, 0, stack.timings())).rejects.toMatchObject({
            code: "page_released"
        });
        expect(stack.prefill.numSavedIntoPages).toBe(1);
        expect(stack.pool.counters.staleWritesRefused).toBe(1);
        expect(stack.counters.statesSavedIntoPages).toBe(0); // never recorded
        expect(slot.tokens).toEqual([]);
        expectPoolDrained(stack.pool);
    });

    it("with no room for its pages until a running transfer ends, exports the state and lets the prefill sequence go before it waits", async () => {
        const stack = handoffStack();
        stack.prefill.saveIntoPages();
        const blocker = stack.pool.reserve({ workspace: workspaceId("bob"), holder: requestId("running"), numPages: 31, firstToken: 0 });
        const slot = stack.decodeSlot();
        const run = stack.handoff.run(stack.request("r1"), workspaceId("alice"), slot, PROMPT, 0, stack.timings());
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(stack.prefill.numFreeSequences).toBe(1); // not held while the pages are waited for
        expect(stack.prefill.numUnreleasedStates).toBe(1);
        expect(slot.tokens).toEqual([]);
        stack.pool.release(blocker);
        await run;
        expect(slot.tokens).toEqual(PROMPT.slice(0, -1));
        expect(slot.numForeignRows).toBe(0);
        expect(stack.prefill.numSavedIntoPages).toBe(0);
        expect(stack.prefill.numUnreleasedStates).toBe(0);
        expectPoolDrained(stack.pool);
    });

    it("lets two handoffs at once take turns on the one prefill sequence", async () => {
        const stack = handoffStack();
        const [slotA, slotB] = [stack.decodeSlot(), stack.decodeSlot()];
        const other = PROMPT.map((token) => token + 50);
        await Promise.all([
            stack.handoff.run(stack.request("a"), workspaceId("alice"), slotA, PROMPT, 0, stack.timings()),
            stack.handoff.run(stack.request("b", workspaceId("bob")), workspaceId("bob"), slotB, other, 0, stack.timings())
        ]);
        expect([slotA.tokens, slotB.tokens]).toEqual([PROMPT.slice(0, -1), other.slice(0, -1)]);
        expect(slotA.numForeignRows + slotB.numForeignRows).toBe(0);
        expectPoolDrained(stack.pool);
    });

    it("prefills arrivals at once on the prefill sequences there are, and one more waits for the first to come free", async () => {
        const stack = handoffStack({ numPrefillSequences: 2 });
        const busyAtEvaluation: number[] = [];
        const evaluate = stack.prefill.evaluate.bind(stack.prefill);
        stack.prefill.evaluate = async (slot, tokens) => {
            busyAtEvaluation.push(stack.prefill.numBusySequences);
            await new Promise<void>((resolve) => setImmediate(resolve)); // the others arrive meanwhile
            await evaluate(slot, tokens);
        };
        const names = ["alice", "bob", "carol"];
        const prompts = names.map((_, index) => PROMPT.map((token) => token + 50 * index));
        const slots = names.map(() => stack.decodeSlot());
        await Promise.all(
            names.map((name, index) =>
                stack.handoff.run(
                    stack.request(name, workspaceId(name)),
                    workspaceId(name),
                    slots[index]!,
                    prompts[index]!,
                    0,
                    stack.timings()
                )
            )
        );
        // alice and bob evaluate together (both sequences busy: under one lock each would see 1); carol
        // evaluates on the first sequence freed, handed to her cleared while the other is still busy.
        expect(busyAtEvaluation).toEqual([2, 2, 2]);
        expect(slots.map((slot) => slot.tokens)).toEqual(prompts.map((prompt) => prompt.slice(0, -1)));
        expect(slots.reduce((sum, slot) => sum + slot.numForeignRows, 0)).toBe(0);
        expect(stack.prefill.numFreeSequences).toBe(2);
        expectPoolDrained(stack.pool);
    });
});

describe("Handoff and the prefill overflow policy", () => {
    it("production: every token goes to prefill, and more than its sequence holds is refused there (admission should have)", async () => {
        const stack = handoffStack({ prefillCapacity: 8 });
        const record = stack.request("r1");
        await expect(
            stack.handoff.run(record, workspaceId("alice"), stack.decodeSlot(), PROMPT, 0, stack.timings())
        ).rejects.toBeInstanceOf(InvariantError);
        record.finish({ kind: "failed", error: new Error("refused") });
        expectPoolDrained(stack.pool);
    });

    it("the 2026 incident's stub: prefill hands over one page, and the page count check refuses it", async () => {
        const stack = handoffStack({ prefillCapacity: 8, policies: { prefillOverflow: stubPrefillOverflow } });
        const record = stack.request("r1");
        const slot = stack.decodeSlot();
        await expect(stack.handoff.run(record, workspaceId("alice"), slot, PROMPT, 0, stack.timings())).rejects.toMatchObject({
            code: "handoff_page_count_mismatch"
        });
        expect(stack.prefill.evaluations).toEqual([PAGE_TOKENS]);
        expect(slot.tokens).toEqual([]);
        record.finish({ kind: "failed", error: new Error("refused") });
        expectPoolDrained(stack.pool);
    });

    it("with the page count check off too, decode computes over the pages it never received: the leak the check prevents", async () => {
        const stack = handoffStack({
            prefillCapacity: 8,
            policies: { prefillOverflow: stubPrefillOverflow, reader: leakyReader(["pageCount"]), scrubber: skippingScrubber }
        });
        const slot = stack.decodeSlot();
        await stack.handoff.run(stack.request("r1"), workspaceId("alice"), slot, PROMPT, 0, stack.timings());
        expect(slot.tokens).toEqual(PROMPT.slice(0, -1)); // it believes it holds the whole prompt
        expect(slot.numForeignRows).toBeGreaterThan(0); // but the rows past the first page are not the prompt's
    });
});
