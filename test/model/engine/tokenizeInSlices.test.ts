import { getLlama, LlamaLogLevel, LlamaText, SpecialToken, SpecialTokensText, type Llama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llamaCppAsset } from "../../../synthetic/model/llamaCppAssets.js";
import { tokenizeLlamaTextInSlices, tokenizePlainTextInSlices } from "../../../engine/runtime/tokenizeInSlices.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { mixedText, VOCABULARIES } from "../../support/mixedText.js";

describe("tokenizing in slices gives the tokens of one call, on real vocabularies", () => {
    let llama: Llama;
    const models = new Map<string, LlamaModel>();
    const text = mixedText(120_000);

    beforeAll(async () => {
        llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
        for (const name of VOCABULARIES) {
            const modelPath = llamaCppAsset(`models/ggml-vocab-${name}.gguf`);
            models.set(name, await llama.loadModel({ modelPath, vocabOnly: true }));
        }
        models.set("tiny", await llama.loadModel({ modelPath: generatedModelPath("tiny"), vocabOnly: true }));
    });
    afterAll(async () => {
        await llama.dispose();
    });

    for (const name of [...VOCABULARIES, "tiny"]) {
        it(`${name}: plain text, from the start and as a continuation, in slices of odd sizes`, async () => {
            const model = models.get(name)!;
            for (const leading of [undefined, "trimLeadingSpace"] as const) {
                const whole = model.tokenize(text, false, leading);
                for (const sliceChars of [257, 1_000, 4_099]) {
                    let numPauses = 0;
                    const sliced = await tokenizePlainTextInSlices(text, model.tokenizer, leading, {
                        sliceChars,
                        yieldToEventLoop: async () => {
                            numPauses++;
                        }
                    });
                    expect(sliced.length, `${name}, ${sliceChars} characters per slice, ${leading ?? "from the start"}`).toBe(whole.length);
                    expect(sliced).toEqual(whole);
                    // it did slice: a cut was found for (nearly) every slice
                    expect(numPauses).toBeGreaterThan(text.length / (sliceChars * 4));
                }
            }
        });

        it(`${name}: a templated text with special tokens between long runs`, async () => {
            const model = models.get(name)!;
            const templated = LlamaText([
                new SpecialToken("BOS"),
                new SpecialTokensText("<|im_start|>user\n"),
                text.slice(0, 50_000),
                new SpecialToken("EOS"),
                text.slice(50_000),
                new SpecialTokensText("<|im_end|>\n<|im_start|>assistant\n")
            ]);
            const sliced = await tokenizeLlamaTextInSlices(templated, model.tokenizer, undefined, { sliceChars: 2_048 });
            expect(sliced).toEqual(templated.tokenize(model.tokenizer));
            const continued = await tokenizeLlamaTextInSlices(templated, model.tokenizer, "trimLeadingSpace", { sliceChars: 2_048 });
            expect(continued).toEqual(templated.tokenize(model.tokenizer, "trimLeadingSpace"));
        });
    }

    it("tokenizes a run with no place to cut (CJK without punctuation) in one call, with the same tokens", async () => {
        const model = models.get("qwen2")!;
        const run = "東京都天気晴明日雨降予報士言".repeat(2_000);
        let numPauses = 0;
        const sliced = await tokenizePlainTextInSlices(run, model.tokenizer, undefined, {
            sliceChars: 1_000,
            yieldToEventLoop: async () => {
                numPauses++;
            }
        });
        expect(sliced).toEqual(model.tokenize(run));
        expect(numPauses).toBe(0);
    });
});
