import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../contract/engineProtocol.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

// Many chats taking turns on fewer decode sequences: each turn evaluates only what is new, the
// tokens from the first one that differs from the workspace's own KV, within 1.1× of them, also
// when the client sends the last answer back changed (so it is tokenized again, not taken from
// the engine's transcript). KV comes back from the workspace's own pages, never another's.
//
// A guard: it was written after the engine already did this, so it passed on the code of its day.
// What it guards was checked by breaking the engine locally (not committed): with reusePrefix
// keeping no prefix (engine/workspace/reusePrefix.ts), or with a swapped-out workspace given back
// its sequence without its pages loaded (WorkspaceTable's swap-in skipping transfer.load), the
// second turn of the first chat evaluates its whole prompt and the 1.1× bound fails.

const NUM_WORKSPACES = 6;
const NUM_TURNS = 4;
const MAX_OVER_NEW = 1.1;

function userText(workspace: number, turn: number): string {
    return `Chat ${workspace}, turn ${turn}: tell me about pages, sequences and the scheduler in a few words.`;
}

/** How many leading tokens two sequences share. */
function sharedPrefix(held: readonly number[], prompt: readonly number[]): number {
    let index = 0;
    while (index < held.length && index < prompt.length && held[index] === prompt[index]) {
        index++;
    }
    return index;
}

describe("a turn evaluates only what is new", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it(`${NUM_WORKSPACES} chats taking turns on 2 decode sequences, answers sent back as the client edited them: at most ${MAX_OVER_NEW}× the new tokens`, async () => {
        const service = await EngineService.start(
            {
                modelPath: generatedModelPath("tiny"),
                ...tinyEngineConfig,
                window: 512,
                prefillContextSize: 512,
                decodeContextSize: 512,
                numPages: 256,
                inPlacePrefillTokens: 16,
                numDecodeSequences: 2
            },
            { runtime }
        );
        try {
            const chats: ChatMessage[][] = Array.from({ length: NUM_WORKSPACES }, (_, index) => [
                { role: "system", content: `You are assistant number ${index}, brief and exact.` }
            ]);
            const ratios: string[] = [];
            for (let turn = 0; turn < NUM_TURNS; turn++) {
                for (let index = 0; index < NUM_WORKSPACES; index++) {
                    const workspace = `rr-${index}`;
                    const messages: ChatMessage[] = [...chats[index]!, { role: "user", content: userText(index, turn) }];
                    const held = [...(service.engine.workspaces().find((record) => record.id === workspace)?.heldTokens ?? [])];
                    const prompt = await service.tokenizeChat(messages);
                    const result = await service.chat({
                        requestId: `${workspace}-${turn}`,
                        workspace,
                        messages,
                        sampling: { temperature: 0, maxTokens: 6 }
                    });
                    if (turn > 0) {
                        const numNew = prompt.length - sharedPrefix(held, prompt);
                        const evaluated = result.usage.evaluatedPromptTokens;
                        ratios.push(`${workspace} turn ${turn}: ${evaluated} of ${numNew} new`);
                        expect(evaluated, ratios.at(-1)).toBeLessThanOrEqual(Math.ceil(numNew * MAX_OVER_NEW));
                    }
                    // the client keeps the answer edited (trimmed, a period added): the engine's transcript no longer matches it
                    chats[index]!.push(messages.at(-1)!, { role: "assistant", content: `${result.text.trim()}.` });
                }
            }
            const { counters } = service.engine;
            expect(counters.swapOuts).toBeGreaterThan(0);
            expect(counters.swapDrops).toBe(0);
            expect(counters.integrityFailures).toBe(0);
            await expectEngineClean(service.engine);
        } finally {
            await service.dispose();
        }
    }, 300_000);
});
