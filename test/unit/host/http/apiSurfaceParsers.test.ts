import { describe, expect, it } from "vitest";
import { parseCompletion } from "../../../../host/http/completions/parseCompletion.js";
import { encodeFloat32 } from "../../../../host/http/embeddings/serveEmbeddings.js";
import { parseEmbeddings } from "../../../../host/http/embeddings/parseEmbeddings.js";
import { OpenAiError } from "../../../../host/http/OpenAiError.js";
import { parameterSize, quantizationLevel } from "../../../../host/http/ollama/ollamaModel.js";
import { parseOllamaOptions } from "../../../../host/http/ollama/parseOllamaOptions.js";
import { parseOllamaChat, parseOllamaGenerate } from "../../../../host/http/ollama/parseOllamaRequests.js";

/** The field a parser's 400 names, and its message. */
function refused(parse: () => unknown): { param: string | null; message: string } {
    try {
        parse();
    } catch (error) {
        expect(error).toBeInstanceOf(OpenAiError);
        expect((error as OpenAiError).status).toBe(400);
        return { param: (error as OpenAiError).param, message: (error as OpenAiError).message };
    }
    throw new Error("the body was accepted");
}

describe("parseCompletion", () => {
    it("reads a text prompt, one token list, or a list of one, with OpenAI's defaults", () => {
        expect(parseCompletion({ model: "m", prompt: "Hi" })).toMatchObject({
            prompt: { text: "Hi" },
            echo: false,
            stream: false,
            sampling: { temperature: 1, maxTokens: 16 }
        });
        expect(parseCompletion({ model: "m", prompt: [1, 2] }).prompt).toEqual({ tokens: [1, 2] });
        expect(parseCompletion({ model: "m", prompt: [[3]] }).prompt).toEqual({ tokens: [3] });
        expect(parseCompletion({ model: "m", prompt: ["x"], logprobs: 3, seed: -1 }).sampling).toMatchObject({
            logprobs: { top: 3 },
            seed: 2 ** 32 - 1
        });
        expect(parseCompletion({ model: "m", prompt: "x", presence_penalty: 0.5, logit_bias: { "7": -100 } }).sampling).toMatchObject({
            presencePenalty: 0.5,
            tokenBias: [{ token: 7, bias: -100 }]
        });
    });

    it.each([
        ["an unknown field", { prompt: "a", mirostat: 1 }, "mirostat"],
        ["a suffix", { prompt: "a", suffix: "b" }, "suffix"],
        ["n above 1", { prompt: "a", n: 2 }, "n"],
        ["best_of above 1", { prompt: "a", best_of: 2 }, "best_of"],
        ["several prompts", { prompt: ["a", "b"] }, "prompt"],
        ["a negative token id", { prompt: [1, -2] }, "prompt"],
        ["echo with token ids", { prompt: [1], echo: true }, "echo"],
        ["echo with logprobs", { prompt: "a", echo: true, logprobs: 1 }, "echo"],
        ["an unknown stream option", { prompt: "a", stream_options: { x: 1 } }, "stream_options.x"],
        ["a logit bias keyed by other than token ids", { prompt: "a", logit_bias: { abc: 5 } }, "logit_bias"]
    ])("refuses %s by name", (_, body, param) => {
        expect(refused(() => parseCompletion({ model: "m", ...body })).param).toBe(param);
    });

    it("says what a field must be, as before its schema", () => {
        expect(refused(() => parseCompletion({ model: "m", prompt: "a", temperature: 3 })).message).toBe(
            "temperature must be a number from 0 to 2; got 3."
        );
        expect(refused(() => parseCompletion({ model: "m", prompt: "a", n: 2 })).message).toBe(
            "n is 2; Kvault generates one completion per request (n = 1)."
        );
        expect(refused(() => parseCompletion({ prompt: "a" }))).toEqual({
            param: "model",
            message: "model is required: use the id from GET /v1/models."
        });
        expect(refused(() => parseCompletion({ model: "m" })).param).toBe("prompt");
    });
});

describe("parseEmbeddings", () => {
    it("reads every shape of input, and refuses an empty one, another encoding and unknown fields", () => {
        expect(parseEmbeddings({ model: "m", input: "a" }).inputs).toEqual(["a"]);
        expect(parseEmbeddings({ model: "m", input: ["a", [1, 2]] }).inputs).toEqual(["a", [1, 2]]);
        expect(parseEmbeddings({ model: "m", input: [4, 5], encoding_format: "base64" })).toMatchObject({
            inputs: [[4, 5]],
            encoding: "base64"
        });
        expect(refused(() => parseEmbeddings({ model: "m", input: "" })).param).toBe("input");
        expect(refused(() => parseEmbeddings({ model: "m", input: "a", encoding_format: "int8" })).param).toBe("encoding_format");
        expect(refused(() => parseEmbeddings({ model: "m", input: "a", truncate: true })).param).toBe("truncate");
        expect(refused(() => parseEmbeddings({ input: "a" }))).toEqual({
            param: "model",
            message: "model is required: use the id from GET /v1/models."
        });
        expect(refused(() => parseEmbeddings({ model: "m" })).param).toBe("input");
        expect(refused(() => parseEmbeddings({ model: "m", input: "a", dimensions: 1.5 }))).toEqual({
            param: "dimensions",
            message: "dimensions must be a whole number; got 1.5."
        });
        expect(refused(() => parseEmbeddings({ model: "m", input: "a", encoding_format: "int8" })).message).toBe(
            'encoding_format must be "float" or "base64"; got "int8".'
        );
        expect(refused(() => parseEmbeddings({ model: "m", input: new Array(2_049).fill("a") })).message).toMatch(
            /2,049 inputs; .* at most 2,048/
        );
    });

    it("encodes base64 as little-endian float32", () => {
        const bytes = Buffer.from(encodeFloat32([1, -0.5]), "base64");
        expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([1, -0.5]);
    });
});

describe("Ollama's requests", () => {
    it("maps options to sampling with Ollama's defaults; -1 is the default length", () => {
        expect(parseOllamaOptions(undefined, 256)).toEqual({
            temperature: 0.8,
            topK: 40,
            topP: 0.9,
            seed: undefined,
            maxTokens: 512,
            stop: undefined
        });
        expect(parseOllamaOptions({ num_predict: -1, temperature: 0, stop: ["x"], num_ctx: 256 }, 256)).toMatchObject({
            maxTokens: 512,
            temperature: 0,
            stop: ["x"]
        });
        expect(parseOllamaOptions({ num_predict: 7, repeat_penalty: 1.1, min_p: 0.05, repeat_last_n: 32 }, 256)).toMatchObject({
            maxTokens: 7,
            repeatPenalty: 1.1,
            minP: 0.05,
            repeatLastTokens: 32
        });
        const messages = [{ role: "user", content: "Hi" }];
        expect(parseOllamaChat({ model: "m", messages, format: "json" }, 256).sampling.grammar).toEqual({ kind: "json" });
        expect(
            parseOllamaChat({ model: "m", messages, format: { type: "object", properties: { a: { type: "string" } } } }, 256).sampling
                .grammar
        ).toMatchObject({
            kind: "jsonSchema"
        });
    });

    it("refuses num_ctx above the window with both numbers, unknown options and unserved fields by name", () => {
        expect(refused(() => parseOllamaOptions({ num_ctx: 4096 }, 256)).message).toMatch(
            /num_ctx is 4,096 tokens; this server's window is 256/
        );
        expect(refused(() => parseOllamaOptions({ num_gpu: 1 }, 256)).param).toBe("options.num_gpu");
        expect(refused(() => parseOllamaOptions({ repeat_last_n: -1 }, 256)).param).toBe("options.repeat_last_n");
        const messages = [{ role: "user", content: "Hi" }];
        expect(refused(() => parseOllamaChat({ model: "m", messages, format: "yaml" }, 256)).param).toBe("format");
        expect(refused(() => parseOllamaChat({ model: "m", messages, format: { type: "string", pattern: "a+" } }, 256)).message).toMatch(
            /^format.*pattern/
        );
        expect(refused(() => parseOllamaChat({ model: "m", messages: [{ role: "user", content: "x", images: ["a"] }] }, 256)).param).toBe(
            "messages[0].images"
        );
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", context: [1, 2] }, 256)).param).toBe("context");
    });

    it("streams by default, renders generate through the template unless raw, and treats an empty prompt as a load", () => {
        expect(parseOllamaChat({ model: "m", messages: [{ role: "user", content: "Hi" }] }, 256).stream).toBe(true);
        expect(parseOllamaGenerate({ model: "m", prompt: "Hi", system: "S" }, 256).messages).toEqual([
            { role: "system", content: "S" },
            { role: "user", content: "Hi" }
        ]);
        expect(parseOllamaGenerate({ model: "m", prompt: "Hi", raw: true }, 256).prompt).toEqual({ text: "Hi" });
        expect(parseOllamaGenerate({ model: "m" }, 256).loadOnly).toBe(true);
    });
});

describe("Ollama's model details", () => {
    it("says parameters and quantisation as Ollama does", () => {
        expect(parameterSize(7_615_616_512)).toBe("7.6B");
        expect(parameterSize(134_515_008)).toBe("134.5M");
        expect(parameterSize(427_264)).toBe("427.3K");
        expect(quantizationLevel("MOSTLY_Q4_K_M")).toBe("Q4_K_M");
        expect(quantizationLevel("ALL_F32")).toBe("F32");
    });
});
