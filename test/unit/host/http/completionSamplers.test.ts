import { describe, expect, it } from "vitest";
import { parseCompletion } from "../../../../host/http/completions/parseCompletion.js";
import { OpenAiError } from "../../../../host/http/OpenAiError.js";

// `/v1/completions` takes llama.cpp's samplers under the names chat completions take them, so a
// backend's raw-prompt turn (RemoteBackend.generate, Ollama's raw generate) is served by a Kvault backend too.
describe("parseCompletion's llama.cpp samplers", () => {
    it("reads top_k, min_p, repeat_penalty and repeat_last_n into the sampling", () => {
        expect(
            parseCompletion({ model: "m", prompt: "x", top_k: 40, min_p: 0.05, repeat_penalty: 1.1, repeat_last_n: 64 }).sampling
        ).toMatchObject({ topK: 40, minP: 0.05, repeatPenalty: 1.1, repeatLastTokens: 64 });
        expect(parseCompletion({ model: "m", prompt: "x" }).sampling).toMatchObject({ topK: undefined, minP: undefined });
    });

    it.each([
        ["top_k", -1],
        ["min_p", 2],
        ["repeat_penalty", 3],
        ["repeat_last_n", 5000]
    ])("refuses %s out of range by name", (field, value) => {
        const parse = (): unknown => parseCompletion({ model: "m", prompt: "x", [field]: value });
        expect(parse).toThrow(OpenAiError);
        expect(parse).toThrow(new RegExp(`^${field} must be`));
    });
});
