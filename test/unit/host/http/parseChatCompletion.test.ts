import { describe, expect, it } from "vitest";
import { OpenAiError } from "../../../../host/http/OpenAiError.js";
import { parseChatCompletion } from "../../../../host/http/parseChatCompletion.js";

const messages = [{ role: "user", content: "Hi" }];

function refused(body: unknown): { param: string | null; message: string; code: string | null } {
    try {
        parseChatCompletion(body);
    } catch (error) {
        expect(error).toBeInstanceOf(OpenAiError);
        expect((error as OpenAiError).status).toBe(400);
        const failure = error as OpenAiError;
        return { param: failure.param, message: failure.message, code: failure.code };
    }
    throw new Error("the body was accepted");
}

describe("parseChatCompletion's schema", () => {
    it("reads the served fields with OpenAI's defaults", () => {
        const read = parseChatCompletion({ model: "m", messages, stop: "x", seed: -1, logprobs: true, top_logprobs: 2, user: "" });
        expect(read).toMatchObject({ model: "m", stream: false, includeUsageInStream: false, user: undefined });
        expect(read.sampling).toMatchObject({ temperature: 1, maxTokens: 512, stop: ["x"], seed: 2 ** 32 - 1, logprobs: { top: 2 } });
        expect(parseChatCompletion({ model: "m", messages, max_tokens: 3, max_completion_tokens: 5 }).sampling.maxTokens).toBe(5);
        expect(
            parseChatCompletion({ model: "m", messages, stream: true, stream_options: { include_usage: true } }).includeUsageInStream
        ).toBe(true);
        // null is absent, and the knowingly ignored fields pass
        expect(parseChatCompletion({ model: "m", messages, temperature: null, store: true, metadata: {} }).sampling.temperature).toBe(1);
    });

    it.each([
        ["no model", { messages }, "model", "model is required: use the id from GET /v1/models."],
        ["an empty model", { model: "", messages }, "model", "model is required: use the id from GET /v1/models."],
        ["no messages", { model: "m" }, "messages", "messages must be a non-empty array."],
        ["a stream that is not a boolean", { model: "m", messages, stream: "yes" }, "stream", "stream must be true or false."],
        ["a temperature above 2", { model: "m", messages, temperature: 3 }, "temperature", "temperature must be a number from 0 to 2."],
        ["a fractional max_tokens", { model: "m", messages, max_tokens: 1.5 }, "max_tokens", "max_tokens must be a whole number."],
        ["max_tokens of 0", { model: "m", messages, max_tokens: 0 }, "max_tokens", "max_tokens must be a number from 1 to 1048576."],
        ["n of 2", { model: "m", messages, n: 2 }, "n", "n is 2; Kvault generates one choice per request (n = 1)."],
        ["top_logprobs alone", { model: "m", messages, top_logprobs: 2 }, "top_logprobs", "top_logprobs needs logprobs set to true."],
        [
            "five stops",
            { model: "m", messages, stop: ["a", "b", "c", "d", "e"] },
            "stop",
            "stop must be a string or an array of up to 4 strings."
        ],
        ["a long user", { model: "m", messages, user: "u".repeat(257) }, "user", "user must be a string of at most 256 characters."],
        [
            "a bad repeat_last_n",
            { model: "m", messages, repeat_last_n: 5000 },
            "repeat_last_n",
            "repeat_last_n must be a number from 0 to 4096."
        ]
    ])("refuses %s, naming the field as before", (_, body, param, message) => {
        expect(refused(body)).toMatchObject({ param, message });
    });

    it("refuses an unknown field with unsupported_parameter, before any other problem", () => {
        const unknown = refused({ model: "", messages, mirostat: 2 });
        expect(unknown).toMatchObject({ param: "mirostat", code: "unsupported_parameter" });
        expect(unknown.message).toMatch(/^mirostat is not served by Kvault; leave it out\. Kvault serves model, messages/);
        expect(refused("[]").message).toBe("The request body must be a JSON object.");
    });
});
