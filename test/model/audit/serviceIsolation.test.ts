import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineService } from "../../../engine/service/EngineService.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

describe("the isolation calls a host makes: audit, replay, drills", () => {
    let service: EngineService;
    beforeAll(async () => { service = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false }); });
    afterAll(async () => { await service.dispose(); });

    it("audits clean, replays a finished greedy turn by the host's id, and refuses one it does not keep", async () => {
        await service.chat({ requestId: "host-turn-1", workspace: "w", messages: [{ role: "user", content: "hello there" }], sampling: { temperature: 0, maxTokens: 5 } });
        await service.chat({ requestId: "host-turn-2", workspace: "w", messages: [{ role: "user", content: "sampled" }], sampling: { temperature: 0.8, seed: 3, maxTokens: 5 } });
        const audit = service.audit();
        expect(audit).toMatchObject({ ok: true, numViolations: 0, numPagesChecked: 48 });
        expect(service.replayableTurns()).toEqual([{ requestId: "host-turn-1", workspace: "w", numTokens: 5 }]);
        expect(await service.replay("host-turn-1")).toMatchObject({ requestId: "host-turn-1", numTokens: 5, identical: true });
        await expect(service.replay("host-turn-2")).rejects.toMatchObject({ code: "replay_unavailable" });
    });

    it("lists the drills and runs one in its own sandbox, leaving this engine's workspaces alone", async () => {
        expect(service.listDrills().map((drill) => drill.id)).toEqual(["foreign-manifest", "flipped-byte", "skipped-scrub", "late-write"]);
        const before = service.engine.sessions().map((session) => session.id);
        const report = await service.runDrill("flipped-byte");
        expect(report).toMatchObject({ id: "flipped-byte", guardFired: true, victimClean: true, leakObservedWithGuardOff: true, guardError: { code: "handoff_checksum_mismatch" } });
        expect(service.engine.sessions().map((session) => session.id)).toEqual(before);
        expect(service.audit().ok).toBe(true);
    });

    it("audits a large pool by its metadata alone, so an audit never stalls the streams", async () => {
        // 2,048 pages of 256 tokens × 512 B = 256 MiB + 1 page: past the byte-scan limit.
        const large = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, pageTokens: 256, numPages: 2049, gpu: false });
        try {
            const audit = large.audit();
            expect(audit).toMatchObject({ ok: true, numPagesChecked: 2049, numFreePagesScanned: 0, numSealedPagesVerified: 0 });
            expect(service.audit().numFreePagesScanned).toBe(48); // the small pool is scanned in full
        } finally {
            await large.dispose();
        }
    });
});
