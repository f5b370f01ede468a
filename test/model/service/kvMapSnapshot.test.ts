// The page map's view of KV, from a real engine on a generated model: every decode sequence's
// blocks against each workspace's meter and owner, and a paced handoff seen step by step.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handoffStepNames, type EngineSnapshot } from "../../../contract/EngineSnapshot.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { Conversation, userMessage } from "../../support/chatDriver.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

const PAGE_TOKENS = 16;

function startService(runtime: LlamaRuntime, overrides: { handoffStepDelayMs?: number; inPlacePrefillTokens?: number } = {}) {
    return EngineService.start(
        {
            modelPath: generatedModelPath("tiny"),
            ...tinyEngineConfig,
            window: 512,
            prefillContextSize: 512,
            decodeContextSize: 512,
            numPages: 256,
            pageTokens: PAGE_TOKENS,
            numDecodeSequences: 4,
            inPlacePrefillTokens: 16,
            ...overrides
        },
        { runtime }
    );
}

describe("the snapshot's sequences", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("show each of 4 workspaces' KV in its decode sequence, in blocks that match its meter and name it", async () => {
        const service = await startService(runtime);
        try {
            const conversations = ["w1", "w2", "w3", "w4"].map((name) => new Conversation(name));
            for (let turn = 0; turn < 2; turn++) {
                await Promise.all(
                    conversations.map((conversation) => conversation.turn(service, userMessage(conversation.workspace, turn)))
                );
            }
            const snapshot = service.snapshot();
            const decode = snapshot.sequences.filter((sequence) => sequence.role === "decode");
            expect(decode.map((sequence) => sequence.index)).toEqual([0, 1, 2, 3]);
            expect(new Set(decode.map((sequence) => sequence.workspace))).toEqual(new Set(["w1", "w2", "w3", "w4"]));
            for (const conversation of conversations) {
                const sequence = decode.find((candidate) => candidate.workspace === conversation.workspace)!;
                const usage = snapshot.workspaces.find((candidate) => candidate.workspace === conversation.workspace)!;
                const meter = (await service.measure(conversation.workspace, conversation.messages, "")).usedTokens;
                const prompt = (await service.measure(conversation.workspace, conversation.messages.slice(0, -1), "")).usedTokens;
                expect(usage).toMatchObject({ residency: "resident", sequence: sequence.index, running: false });
                expect(sequence.numTokens, conversation.workspace).toBe(usage.heldTokens);
                // The KV holds the last turn's prompt (the meter up to its user message) and the answer's
                // tokens as generated; the meter counts the answer re-rendered with its closing tokens.
                expect(sequence.numTokens).toBeGreaterThan(prompt);
                expect(sequence.numTokens).toBeLessThanOrEqual(meter);
                expect(sequence.numBlocks).toBe(Math.ceil(sequence.numTokens / PAGE_TOKENS));
                expect(sequence).toMatchObject({ capacity: 512, running: false });
            }
            expect(snapshot.sequences[0]).toMatchObject({ role: "prefill", numTokens: 0, numBlocks: 0, running: false });
            expect(snapshot.handoffs).toEqual([]);
            expect(snapshot.bytesPerToken * PAGE_TOKENS).toBe(snapshot.pageMap.pageBytes);
            await expectEngineClean(service.engine);
        } finally {
            await service.dispose();
        }
    });

    it("in the demo mode, show a handoff step by step: prefill held by the workspace, sealed pages in the pool, then decode", async () => {
        const service = await startService(runtime, { handoffStepDelayMs: 150, inPlacePrefillTokens: 0 });
        try {
            const conversation = new Conversation("demo");
            await conversation.turn(service, userMessage("demo", 0));
            const seen: EngineSnapshot[] = [];
            const turn = conversation.turn(service, userMessage("demo", 1));
            let settled = false;
            void turn.finally(() => (settled = true));
            for (let round = 0; round < 400 && !settled; round++) {
                seen.push(service.snapshot());
                await new Promise((resolve) => setTimeout(resolve, 10));
            }
            await turn;
            const steps = [...new Set(seen.flatMap((snapshot) => snapshot.handoffs.map((handoff) => handoff.step)))];
            expect(steps).toEqual([...handoffStepNames]);
            expect(seen.flatMap((snapshot) => snapshot.handoffs).every((handoff) => handoff.workspace === "demo")).toBe(true);
            const prefilling = seen.filter((snapshot) => snapshot.handoffs[0]?.step === "sealing pages");
            expect(prefilling.length).toBeGreaterThan(0);
            expect(prefilling.at(-1)!.sequences[0]).toMatchObject({ role: "prefill", workspace: "demo", running: true });
            expect(prefilling.at(-1)!.sequences[0]!.numTokens).toBeGreaterThan(0);
            const toDecode = seen.filter((snapshot) => snapshot.handoffs[0]?.step === "pages to decode");
            expect(toDecode.at(-1)!.pageMap.numPagesByState.sealed).toBeGreaterThan(0);
            expect(toDecode.at(-1)!.pageMap.owners).toContain("demo");
            expect(toDecode.at(-1)!.pageMap.ownedPages.count).toBeGreaterThan(0);
            const after = service.snapshot();
            expect(after.handoffs).toEqual([]);
            expect(after.sequences[0]).toMatchObject({ role: "prefill", numTokens: 0, running: false });
            expect(after.sequences.find((sequence) => sequence.workspace === "demo")!.numTokens).toBeGreaterThan(
                prefilling.at(-1)!.sequences[0]!.numTokens - 1
            );
            await expectEngineClean(service.engine);
        } finally {
            await service.dispose();
        }
    });
});
