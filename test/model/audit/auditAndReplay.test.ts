import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestId } from "../../../engine/core/ids.js";
import { ReplayUnavailableError } from "../../../engine/KvEngine.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { Conversation, userMessage } from "../../support/chatDriver.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

describe("the engine audit (I1–I7) and differential replay (I8)", () => {
    let runtime: LlamaRuntime;
    let service: EngineService;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        service = await EngineService.start(
            {
                modelPath: generatedModelPath("tiny"),
                ...tinyEngineConfig,
                window: 512,
                decodeContextSize: 512,
                prefillContextSize: 512,
                numPages: 128,
                numDecodeSequences: 2,
                inPlacePrefillTokens: 8
            },
            { runtime }
        );
    });
    afterAll(async () => {
        await service.dispose();
        await runtime.dispose();
    });

    it("is clean after workspaces chat, swap out into pages and back, and every served answer replays identically alone", async () => {
        const conversations = ["a", "b", "c", "d"].map((name) => new Conversation(name));
        for (let turn = 0; turn < 2; turn++) {
            for (const conversation of conversations) {
                await conversation.turn(service, userMessage(conversation.workspace, turn));
                const audit = service.engine.audit();
                expect(audit.violations).toEqual([]); // the pool's and the engine's
                expect(audit.ok).toBe(true);
            }
        }
        const swapped = service.engine.workspaces().filter((workspace) => workspace.residency.kind === "swapped");
        expect(swapped.length).toBeGreaterThan(0); // 4 workspaces on 2 sequences: two live in pages
        expect(service.engine.audit().numSealedPagesVerified).toBeGreaterThan(0);

        const requests = service.engine.replayableRequests();
        expect(requests).toHaveLength(8);
        for (const request of requests) {
            const replay = await service.engine.replay(request);
            expect(replay, request).toMatchObject({ identical: true, numTokens: 6 });
        }
        await expectEngineClean(service.engine);
    });

    it("finds a flipped byte in a swapped workspace's pages (I7), and the swap-in refuses it", async () => {
        const conversations = ["p", "q", "r"].map((name) => new Conversation(name));
        for (const conversation of conversations) {
            await conversation.turn(service, userMessage(conversation.workspace, 0));
        }
        const victim = service.engine.workspaces().find((workspace) => workspace.residency.kind === "swapped")!;
        expect(victim).toBeDefined();
        const residency = victim.residency as Extract<typeof victim.residency, { kind: "swapped" }>;
        service.engine.pool.injectByteFlip(residency.manifest.pages[0]!, residency.manifest.generation, 7);

        const audit = service.engine.audit();
        expect(audit.ok).toBe(false);
        expect(audit.violations.map((violation) => violation.invariant)).toContain("I7");

        const conversation = conversations.find((candidate) => candidate.workspace === victim.id)!;
        await expect(conversation.turn(service, userMessage(conversation.workspace, 1))).rejects.toMatchObject({
            code: "handoff_checksum_mismatch"
        });
        expect(service.engine.counters.integrityFailures).toBe(1);
        expect(service.engine.audit().ok).toBe(true); // the corrupted pages were released and scrubbed
        await expectEngineClean(service.engine);
    });

    it("refuses to replay a request it does not keep", async () => {
        await expect(service.engine.replay(requestId("req-999999"))).rejects.toBeInstanceOf(ReplayUnavailableError);
    });
});
