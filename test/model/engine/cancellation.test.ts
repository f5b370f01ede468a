import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { KvEngine, KvEngineHooks } from "../../../engine/KvEngine.js";
import type { PageManifest } from "../../../engine/handoff/PageManifest.js";
import type { PagePool } from "../../../engine/pages/PagePool.js";
import { PageState } from "../../../engine/pages/PageState.js";
import { RequestCancelledError } from "../../../engine/request/requestErrors.js";
import type { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { expectEveryLayerOnDevice, startTestRuntime } from "../../support/testRuntime.js";
import { alice, bob, expectEngineClean, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

const MAX_TOKENS = 8;

/** Copies of a sealed manifest's page bytes, read through read leases. */
function readPages(manifest: PageManifest, pool: PagePool): Buffer[] {
    return manifest.pages.map((page) => {
        const leased = pool.acquireReadLease(page, manifest.generation);
        if (!leased.ok) {
            throw leased.error;
        }
        try {
            return Buffer.from(leased.lease.read());
        } finally {
            leased.lease.release();
        }
    });
}

describe("cancellation at every stage frees through quarantine and leaks nothing", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    const hooks: KvEngineHooks = {};
    let promptA: number[];
    let promptB: number[];
    let referenceB: readonly number[];

    beforeAll(async () => {
        runtime = await startTestRuntime();
        engine = await startTinyEngine(runtime, {}, hooks);
        expectEveryLayerOnDevice(engine);
        promptA = promptOf(engine, 60, "Workspace A's secret: the launch code is 0000. ");
        promptB = promptOf(engine, 50, "Workspace B asks about the weather. ");
        const unified = await startTinyEngine(runtime, { mode: "unified" });
        referenceB = (await unified.generate({ workspace: bob, promptTokens: promptB, maxTokens: MAX_TOKENS })).tokens;
        await unified.dispose();
    });
    afterAll(async () => {
        await engine.dispose();
        await runtime.dispose();
    });
    beforeEach(() => {
        for (const key of Object.keys(hooks) as (keyof KvEngineHooks)[]) {
            delete hooks[key];
        }
    });

    it("during prefill", async () => {
        const controller = new AbortController();
        const stages: string[] = [];
        hooks.onStatus = (_, status) => {
            stages.push(status.kind);
            if (status.kind === "prefilling") {
                controller.abort();
            }
        };
        await expect(
            engine.generate({ workspace: alice, promptTokens: promptA, maxTokens: MAX_TOKENS, signal: controller.signal })
        ).rejects.toThrow(new RequestCancelledError("prefilling"));
        expect(stages).toEqual(["prefilling", "cancelled"]);
        expect(engine.counters.cancelled).toBe(1);
        await expectEngineClean(engine);
    });

    it("during transfer, with a slow writer: pages stay quarantined until its lease drains; a request admitted at once gets other pages and none of the cancelled bytes", async () => {
        const controller = new AbortController();
        let pagesOfA: number[] = [];
        let pagesOfB: number[] = [];
        let bytesOfB: Buffer[] = [];
        let lateWriteRefusedBefore = 0;

        hooks.beforeTransferWrite = async () => {
            delete hooks.beforeTransferWrite; // only A's writer is slow
            const owned = Array.from({ length: engine.config.numPages }, (_, page) => engine.pool.pageInfo(page as never)).filter(
                (info) => info.state !== PageState.Free
            );
            pagesOfA = owned.map((info) => info.pageId);
            controller.abort();

            // A's pages: released by the cancel, but held by the writer's leases: quarantined, not free.
            for (const page of pagesOfA) {
                expect(engine.pool.pageInfo(page as never)).toMatchObject({ state: PageState.Quarantined, hasWriter: true });
            }

            // B is admitted at once, while A's writer is still in flight.
            hooks.afterSeal = (manifest, pool) => {
                pagesOfB = [...manifest.pages];
                bytesOfB = readPages(manifest, pool);
            };
            const resultB = await engine.generate({ workspace: bob, promptTokens: promptB, maxTokens: MAX_TOKENS });
            expect(resultB.tokens).toEqual(referenceB);
            lateWriteRefusedBefore = engine.pool.counters.staleWritesRefused;
        };

        await expect(
            engine.generate({ workspace: alice, promptTokens: promptA, maxTokens: MAX_TOKENS, signal: controller.signal })
        ).rejects.toThrow(new RequestCancelledError("transferring"));

        expect(pagesOfA).toHaveLength(4); // 59 handed-off positions
        expect(pagesOfB).toHaveLength(4);
        expect(pagesOfB.filter((page) => pagesOfA.includes(page))).toEqual([]);
        // A's late write was refused by the pool, counted, and never applied.
        expect(engine.pool.counters.staleWritesRefused).toBe(lateWriteRefusedBefore + 1);
        await expectEngineClean(engine);

        // By content: B's pages held exactly what B alone writes, byte for byte.
        let bytesOfBAlone: Buffer[] = [];
        hooks.afterSeal = (manifest, pool) => {
            bytesOfBAlone = readPages(manifest, pool);
        };
        await engine.generate({ workspace: bob, promptTokens: promptB, maxTokens: MAX_TOKENS });
        expect(bytesOfB.length).toBe(bytesOfBAlone.length);
        bytesOfB.forEach((bytes, index) => expect(bytes.equals(bytesOfBAlone[index]!), `page ${index}`).toBe(true));
        await expectEngineClean(engine);
    });

    it("during decode, within one step", async () => {
        const controller = new AbortController();
        const tokensSeen: number[] = [];
        await expect(
            engine.generate({
                workspace: alice,
                promptTokens: promptA,
                maxTokens: 64,
                signal: controller.signal,
                onToken: (token) => {
                    tokensSeen.push(token);
                    if (tokensSeen.length === 3) {
                        controller.abort();
                    }
                }
            })
        ).rejects.toThrow(new RequestCancelledError("decoding"));
        expect(tokensSeen).toHaveLength(3);
        await expectEngineClean(engine);
    });

    it("before it starts: an aborted signal is cancelled at the door, before any page is reserved", async () => {
        const reservationsBefore = engine.pool.counters.numReservations;
        await expect(
            engine.generate({ workspace: alice, promptTokens: promptA, maxTokens: MAX_TOKENS, signal: AbortSignal.abort() })
        ).rejects.toBeInstanceOf(RequestCancelledError);
        expect(engine.pool.counters.numReservations).toBe(reservationsBefore);
        await expectEngineClean(engine);
    });

    it("serves the next request exactly after all of that", async () => {
        const result = await engine.generate({ workspace: bob, promptTokens: promptB, maxTokens: MAX_TOKENS });
        expect(result.tokens).toEqual(referenceB);
        expect(engine.counters.cancelled).toBe(4);
        await expectEngineClean(engine);
    });
});
