import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel } from "node-llama-cpp";
import { generateGreedy } from "../support/generateGreedy.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { generatedModelPath } from "../support/generatedModels.js";

const PROMPT = "The quick brown fox jumps over the lazy dog.\nKvault keeps every workspace's pages apart.";

describe("the first vertical slice: node-llama-cpp loads a generated model and generates", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start();
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("reports the backend it chose", () => {
        expect(["cuda", "vulkan", "metal", "cpu"]).toContain(runtime.backend);
        expect(runtime.describe()).toMatch(
            /^(cpu, (prebuilt|local build|portable build), \d+ threads( \(auto: .+\))?|(cuda|vulkan|metal), (prebuilt|local build|portable build), .+ \((gpu|cpu) device\).*)$/
        );
    });

    describe("tiny", () => {
        let model: LlamaModel;
        beforeAll(async () => {
            model = await runtime.loadModel(generatedModelPath("tiny"));
        });
        afterAll(async () => {
            await model.dispose();
        });

        it("describes itself as the generated llama model with the preset's geometry", () => {
            expect(model.fileInfo.metadata.general.architecture).toBe("llama");
            expect(model.fileInfo.metadata.general.name).toBe("Kvault synthetic tiny");
            expect(model.trainContextSize).toBe(4096);
            expect(model.tokens.bos).toBe(1);
            expect(model.tokens.eos).toBe(2);
        });

        it("tokenizes through the SentencePiece vocabulary and detokenizes back to the text", () => {
            const tokens = model.tokenize(PROMPT);
            expect(tokens.length).toBeGreaterThan(10);
            expect(tokens.length).toBeLessThan(PROMPT.length);
            expect(model.detokenize(tokens)).toBe(PROMPT);
        });

        it("gives the same greedy tokens run after run, and different tokens for a different prompt", async () => {
            const runs = [];
            for (let i = 0; i < 3; i++) {
                runs.push(await generateGreedy(model, PROMPT, 24));
            }
            expect(runs[0]!.tokens).toHaveLength(24);
            expect(new Set(runs[0]!.tokens).size).toBeGreaterThan(3);
            expect(runs[1]!.tokens).toEqual(runs[0]!.tokens);
            expect(runs[2]!.tokens).toEqual(runs[0]!.tokens);

            const other = await generateGreedy(model, "A different prompt entirely, about pages.", 24);
            expect(other.tokens).not.toEqual(runs[0]!.tokens);
        });

        it("refuses a prompt that does not fit instead of letting the context shift truncate it", async () => {
            await expect(generateGreedy(model, PROMPT.repeat(20), 16, 256)).rejects.toThrow(
                /needs \d+ tokens and 16 more are asked for; the context holds 256/
            );
        });
    });

    it("loads small (about 125M parameters) and generates with it", async () => {
        const model = await runtime.loadModel(generatedModelPath("small"));
        try {
            expect(model.fileInfo.metadata.general.name).toBe("Kvault synthetic small");
            const first = await generateGreedy(model, PROMPT, 8);
            const second = await generateGreedy(model, PROMPT, 8);
            expect(first.tokens).toHaveLength(8);
            expect(second.tokens).toEqual(first.tokens);
        } finally {
            await model.dispose();
        }
    });
});
