import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineService } from "../../../engine/service/EngineService.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { Conversation, userMessage } from "../../support/chatDriver.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

const NUM_TURNS = 3;

async function startService(runtime: LlamaRuntime, numDecodeSequences: number): Promise<EngineService> {
    return EngineService.start(
        {
            modelPath: generatedModelPath("tiny"),
            ...tinyEngineConfig,
            window: 512,
            prefillContextSize: 512,
            decodeContextSize: 512,
            numPages: 256,
            inPlacePrefillTokens: 16,
            numDecodeSequences
        },
        { runtime }
    );
}

/** Each workspace's conversation, run alone on a fresh engine, one turn at a time: the oracle. */
async function runAlone(runtime: LlamaRuntime, names: readonly string[]): Promise<Map<string, string[]>> {
    const service = await startService(runtime, 1);
    try {
        const answers = new Map<string, string[]>();
        for (const name of names) {
            const conversation = new Conversation(name);
            for (let turn = 0; turn < NUM_TURNS; turn++) {
                await conversation.turn(service, userMessage(name, turn));
            }
            answers.set(name, conversation.answers);
            await service.forgetWorkspace(name);
        }
        return answers;
    } finally {
        await service.dispose();
    }
}

describe("workspaces chatting at once", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("4 workspaces at once each get exactly the greedy answers they get alone", async () => {
        const names = ["w1", "w2", "w3", "w4"];
        const alone = await runAlone(runtime, names);
        const service = await startService(runtime, 4);
        try {
            const conversations = names.map((name) => new Conversation(name));
            for (let turn = 0; turn < NUM_TURNS; turn++) {
                await Promise.all(
                    conversations.map((conversation) => conversation.turn(service, userMessage(conversation.workspace, turn)))
                );
            }
            for (const conversation of conversations) {
                expect(conversation.answers, conversation.workspace).toEqual(alone.get(conversation.workspace));
                expect(conversation.answers.every((answer) => answer.length > 0)).toBe(true);
            }
            expect(new Set(conversations.map((conversation) => conversation.answers.join("|"))).size).toBe(4);
            expect(service.engine.counters.swapOuts).toBe(0);
            await expectEngineClean(service.engine);
        } finally {
            await service.dispose();
        }
    });

    it("8 workspaces on 2 decode sequences: queued fairly, swapped through pages, every turn equal to a run alone", async () => {
        const names = Array.from({ length: 8 }, (_, index) => `ws${index + 1}`);
        const alone = await runAlone(runtime, names);
        const service = await startService(runtime, 2);
        try {
            const conversations = names.map((name) => new Conversation(name));
            const positions: number[] = [];
            for (let turn = 0; turn < NUM_TURNS; turn++) {
                await Promise.all(
                    conversations.map((conversation) => {
                        const messages = [
                            ...conversation.messages,
                            { role: "user" as const, content: userMessage(conversation.workspace, turn) }
                        ];
                        return service
                            .chat(
                                {
                                    requestId: `${conversation.workspace}-${turn}`,
                                    workspace: conversation.workspace,
                                    messages,
                                    sampling: { temperature: 0, maxTokens: 6 }
                                },
                                (event) => {
                                    if (event.type === "queued") {
                                        positions.push(event.position);
                                    }
                                }
                            )
                            .then((result) => {
                                conversation.messages.push(messages.at(-1)!, { role: "assistant", content: result.text });
                                conversation.answers.push(result.text);
                                if (turn > 0) {
                                    // the workspace's history came back from pages (or stayed resident), never recomputed
                                    expect(result.usage.cachedPromptTokens, `${conversation.workspace} turn ${turn}`).toBeGreaterThan(0);
                                }
                            });
                    })
                );
            }
            for (const conversation of conversations) {
                expect(conversation.answers, conversation.workspace).toEqual(alone.get(conversation.workspace));
            }
            const { counters } = service.engine;
            expect(counters.swapOuts).toBeGreaterThanOrEqual(8);
            expect(counters.swapIns).toBeGreaterThanOrEqual(8);
            expect(counters.swapDrops).toBe(0);
            expect(counters.integrityFailures).toBe(0);
            // Waiting requests were told their place: with 2 running, the 8th of a round waits 6th.
            expect(Math.max(...positions)).toBe(6);
            await expectEngineClean(service.engine);
        } finally {
            await service.dispose();
        }
    }, 300_000);
});
