import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llamaCppAsset } from "../../../synthetic/model/llamaCppAssets.js";
import { TextStreamer } from "../../../engine/service/TextStreamer.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { mixedText, VOCABULARIES } from "../../support/mixedText.js";

/** Streams `tokens` one at a time as EngineService does; returns the chunks and the streamer. */
function stream(model: LlamaModel, tokens: readonly number[], stop: readonly string[] = []): { chunks: string[]; streamer: TextStreamer } {
    const streamer = new TextStreamer((tail, previous) => model.detokenize(tail as Token[], false, previous as Token[]), stop);
    const chunks: string[] = [];
    for (const token of tokens) {
        chunks.push(streamer.push(token));
        if (streamer.stopped) {
            break;
        }
    }
    return { chunks, streamer };
}

/** Seeded token ids over the whole vocabulary: byte tokens, pieces with and without a leading space, control tokens. */
function randomTokens(numTokens: number, vocabularySize: number, seed: number): number[] {
    let state = seed;
    return Array.from({ length: numTokens }, () => {
        state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
        return state % vocabularySize;
    });
}

// The streamed text must be exactly the text of all the tokens at once (what generateGreedy and
// every greedy comparison read), though each step detokenizes only the tokens since the last
// complete character, with the ones before as context.
describe("TextStreamer on real vocabularies: the streamed text is the text of the whole answer", () => {
    let llama: Llama;
    const models = new Map<string, LlamaModel>();

    beforeAll(async () => {
        llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
        for (const name of VOCABULARIES) {
            models.set(name, await llama.loadModel({ modelPath: llamaCppAsset(`models/ggml-vocab-${name}.gguf`), vocabOnly: true }));
        }
        models.set("tiny", await llama.loadModel({ modelPath: generatedModelPath("tiny"), vocabOnly: true }));
    });
    afterAll(async () => {
        await llama.dispose();
    });

    for (const name of [...VOCABULARIES, "tiny"]) {
        it(`${name}: text in many scripts, and random token ids`, () => {
            const model = models.get(name)!;
            const vocabularySize = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
            for (const [what, tokens] of [
                ["mixed text", model.tokenize(mixedText(6_000))],
                ["random ids", randomTokens(3_000, vocabularySize, 7)]
            ] as const) {
                const whole = model.detokenize(tokens as Token[]);
                const { chunks, streamer } = stream(model, tokens);
                expect(chunks.join("") + streamer.rest(), `${name}, ${what}`).toBe(whole);
                expect(streamer.finish(), `${name}, ${what}`).toBe(whole);
            }
        });
    }

    it("ends before a stop string that spans tokens, as a cut of the whole text would", () => {
        const model = models.get("qwen2")!;
        const tokens = model.tokenize(mixedText(6_000));
        const whole = model.detokenize(tokens);
        const stop = "明日は雨";
        const { chunks, streamer } = stream(model, tokens, [stop]);
        expect(streamer.stopped).toBe(true);
        expect(chunks.join("") + streamer.rest()).toBe(whole.slice(0, whole.indexOf(stop)));
        expect(streamer.finish()).toBe(whole.slice(0, whole.indexOf(stop)));
    });
});
