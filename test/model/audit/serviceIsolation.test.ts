import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineService } from "../../../engine/service/EngineService.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

describe("the isolation calls a host makes: audit, replay, drills", () => {
    let service: EngineService;
    beforeAll(async () => {
        service = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false });
    });
    afterAll(async () => {
        await service.dispose();
    });

    it("audits clean, replays a finished greedy turn by the host's id, and refuses one it does not keep", async () => {
        await service.chat({
            requestId: "host-turn-1",
            workspace: "w",
            messages: [{ role: "user", content: "hello there" }],
            sampling: { temperature: 0, maxTokens: 5 }
        });
        await service.chat({
            requestId: "host-turn-2",
            workspace: "w",
            messages: [{ role: "user", content: "sampled" }],
            sampling: { temperature: 0.8, seed: 3, maxTokens: 5 }
        });
        const audit = await service.audit();
        expect(audit).toMatchObject({
            ok: true,
            numViolations: 0,
            numPagesChecked: 48,
            numFreePagesScanned: 48,
            numPagesChangedDuringScan: 0
        });
        expect(service.replayableTurns()).toEqual([{ requestId: "host-turn-1", workspace: "w", numTokens: 5 }]);
        expect(await service.replay("host-turn-1")).toMatchObject({ requestId: "host-turn-1", numTokens: 5, identical: true });
        await expect(service.replay("host-turn-2")).rejects.toMatchObject({ code: "replay_unavailable" });
    });

    it("lists the drills and runs one in its own sandbox, leaving this engine's workspaces alone", async () => {
        expect(service.listDrills().map((drill) => drill.id)).toEqual([
            "foreign-manifest",
            "flipped-byte",
            "skipped-scrub",
            "late-write",
            "undersized-prefill-pool",
            "dropped-pages",
            "replayed-completion"
        ]);
        const before = service.engine.workspaces().map((workspace) => workspace.id);
        const report = await service.runDrill("flipped-byte");
        expect(report).toMatchObject({
            id: "flipped-byte",
            guardFired: true,
            victimClean: true,
            leakObservedWithGuardOff: true,
            guardError: { code: "handoff_checksum_mismatch" }
        });
        expect(service.engine.workspaces().map((workspace) => workspace.id)).toEqual(before);
        expect((await service.audit()).ok).toBe(true);
    });

    it("audits a large pool in full, its byte scans in slices of about a millisecond, so an audit never stalls the streams", async () => {
        // 2,049 pages of 256 tokens × 512 B: 256 MiB and a page, where audits used to check metadata alone.
        const large = await EngineService.start({
            modelPath: generatedModelPath("tiny"),
            ...tinyEngineConfig,
            pageTokens: 256,
            numPages: 2049,
            gpu: false
        });
        try {
            const [audit, joined] = [large.audit(), large.audit()];
            expect(joined).toBe(audit); // one audit at a time: a second call gets the running one's answer
            const summary = await audit;
            expect(summary).toMatchObject({
                ok: true,
                numPagesChecked: 2049,
                numFreePagesScanned: 2049,
                numSealedPagesVerified: 0,
                numPagesChangedDuringScan: 0
            });
            expect(summary.cost!.numSlices).toBeGreaterThan(1);
            expect(summary.cost!.byteScanMs).toBeGreaterThan(0);
        } finally {
            await large.dispose();
        }
    });

    it("audits on a timer when asked to, and puts the results in every snapshot", async () => {
        const periodic = await EngineService.start(
            { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            { auditIntervalMs: 50 }
        );
        try {
            expect(service.snapshot().audit).toBeUndefined(); // an engine started without an interval audits only when asked
            await expect.poll(() => periodic.snapshot().audit?.numRuns ?? 0, { timeout: 5_000, interval: 20 }).toBeGreaterThanOrEqual(3);
            const feed = periodic.snapshot().audit!;
            expect(feed).toMatchObject({
                intervalMs: 50,
                numRunsWithViolations: 0,
                latest: { ok: true, numPagesChecked: 48, numFreePagesScanned: 48 }
            });
            expect(feed.lastWithViolations).toBeUndefined();
        } finally {
            await periodic.dispose();
        }
    });
});
