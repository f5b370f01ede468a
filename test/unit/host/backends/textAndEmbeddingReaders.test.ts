import { describe, expect, it } from "vitest";
import type { BackendConfig } from "../../../../host/backends/BackendConfig.js";
import { BackendAnswerError, BackendMalformedError } from "../../../../host/backends/backendErrors.js";
import { readEmbeddingList, readTextChunk, readTextCompletion } from "../../../../host/backends/openAiChunks.js";

// The gateway's checks of a backend's text completions and embeddings, on the shapes vLLM,
// llama-server and Kvault send: each bad answer is a named error that says which field is wrong.
const config: BackendConfig = { name: "gpu", apiBase: "http://127.0.0.1:1/v1", root: "http://127.0.0.1:1", remote: false };

const float32Base64 = (values: readonly number[]): string => {
    const bytes = Buffer.alloc(values.length * 4);
    values.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
    return bytes.toString("base64");
};

describe("readTextCompletion and readTextChunk", () => {
    it("read choices[0].text, the finish reason and the usage", () => {
        expect(
            readTextCompletion(config, {
                object: "text_completion",
                choices: [{ text: "Once", index: 0, logprobs: null, finish_reason: "length" }],
                usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }
            })
        ).toEqual({
            text: "Once",
            finishReason: "length",
            usage: { promptTokens: 3, cachedPromptTokens: 0, evaluatedPromptTokens: 3, completionTokens: 1 }
        });
        expect(readTextChunk(config, JSON.stringify({ choices: [{ text: " up", finish_reason: null }] }))).toEqual({ text: " up" });
        expect(readTextChunk(config, JSON.stringify({ choices: [{ text: "", finish_reason: "stop" }] }))).toEqual({
            text: "",
            finishReason: "stop"
        });
        expect(
            readTextChunk(config, JSON.stringify({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 5 } })).usage
        ).toMatchObject({ promptTokens: 2, completionTokens: 5 });
    });

    it.each([
        [
            "a chat completion's message in place of text",
            { choices: [{ message: { content: "x" }, finish_reason: "stop" }] },
            "choices[0].text is not a string"
        ],
        ["no choices", { object: "text_completion" }, "choices[0] is missing"],
        ["no finish reason", { choices: [{ text: "x", finish_reason: null }] }, "choices[0].finish_reason is missing"],
        ["usage without counts", { choices: [{ text: "x", finish_reason: "stop" }], usage: { total_tokens: 3 } }, "usage has no whole"]
    ])("refuse a whole answer with %s", (_case, answer, problem) => {
        expect(() => readTextCompletion(config, answer)).toThrow(BackendMalformedError);
        expect(() => readTextCompletion(config, answer)).toThrow(problem);
    });

    it("refuse a chunk that is not JSON or has no text, and raise the backend's error event as its own", () => {
        expect(() => readTextChunk(config, "{not json")).toThrow(/Backend "gpu" sent a streamed text completion chunk .*not JSON/);
        expect(() => readTextChunk(config, JSON.stringify({ choices: [{ delta: { content: "x" } }] }))).toThrow(
            "choices[0].text is not a string"
        );
        expect(() => readTextChunk(config, JSON.stringify({ error: { message: "slot gone" } }))).toThrow(BackendAnswerError);
    });
});

describe("readEmbeddingList", () => {
    it("reads float lists and base64 float32, in the order of their index, with the prompt tokens", () => {
        expect(
            readEmbeddingList(config, {
                object: "list",
                data: [
                    { object: "embedding", index: 1, embedding: [0.5, -1] },
                    { object: "embedding", index: 0, embedding: float32Base64([0.25, 2]) }
                ],
                usage: { prompt_tokens: 7, total_tokens: 7 }
            })
        ).toEqual({
            embeddings: [
                [0.25, 2],
                [0.5, -1]
            ],
            promptTokens: 7
        });
        expect(readEmbeddingList(config, { data: [{ embedding: [1, 2, 3] }] })).toEqual({ embeddings: [[1, 2, 3]] });
    });

    it.each([
        ["no data", { object: "list" }, "no data list"],
        ["an empty vector", { data: [{ embedding: [] }] }, "data[0].embedding is not a non-empty list of finite numbers"],
        ["a string number", { data: [{ embedding: [1, "2"] }] }, "data[0].embedding is not a non-empty list"],
        ["a string that is not base64 of float32", { data: [{ embedding: "abc" }] }, "not base64 of float32"],
        [
            "two entries at one index",
            {
                data: [
                    { index: 0, embedding: [1] },
                    { index: 0, embedding: [2] }
                ]
            },
            "data[1].index is not a distinct position"
        ],
        ["vectors of two widths", { data: [{ embedding: [1, 2] }, { embedding: [1] }] }, "vector 1 has 1 numbers and vector 0 has 2"],
        ["usage without prompt_tokens", { data: [{ embedding: [1] }], usage: { total_tokens: "3" } }, "usage has no whole prompt_tokens"]
    ])("refuses an answer with %s", (_case, answer, problem) => {
        expect(() => readEmbeddingList(config, answer)).toThrow(BackendMalformedError);
        expect(() => readEmbeddingList(config, answer)).toThrow(problem);
    });

    it("raises the backend's error put where the answer was due", () => {
        expect(() => readEmbeddingList(config, { error: { message: "This server does not support embeddings." } })).toThrow(
            'Backend "gpu" ended the answer with an error: This server does not support embeddings.'
        );
    });
});
