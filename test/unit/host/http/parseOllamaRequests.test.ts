import { describe, expect, it } from "vitest";
import { turnLimits } from "../../../../contract/limits.js";
import { OpenAiError } from "../../../../host/http/OpenAiError.js";
import { DEFAULT_OLLAMA_PREDICT, parseOllamaOptions } from "../../../../host/http/ollama/parseOllamaOptions.js";
import {
    parseOllamaChat,
    parseOllamaEmbed,
    parseOllamaGenerate,
    parseOllamaShow
} from "../../../../host/http/ollama/parseOllamaRequests.js";

/** The 400 a parser throws: its message, the field it names and its code. */
function refused(parse: () => unknown): { message: string; param: string | null; code: string | null } {
    try {
        parse();
    } catch (error) {
        expect(error).toBeInstanceOf(OpenAiError);
        const answer = error as OpenAiError;
        expect(answer.status).toBe(400);
        return { message: answer.message, param: answer.param, code: answer.code };
    }
    throw new Error("the body was accepted");
}

const messages = [{ role: "user", content: "Hi" }];

describe("Ollama's bodies: unknown keys", () => {
    it("refuses a key no endpoint lists, by name, with the list of what is served", () => {
        expect(refused(() => parseOllamaChat({ model: "m", messages, tool_choice: "auto" }, 256))).toEqual({
            message:
                "tool_choice is not a field Kvault serves here; leave it out. The fields served are model, messages, stream, format, options, keep_alive, tools, think.",
            param: "tool_choice",
            code: null
        });
        expect(refused(() => parseOllamaGenerate({ model: "m", n: 2 }, 256)).param).toBe("n");
        expect(refused(() => parseOllamaEmbed({ model: "m", input: "a", prompt: "a" }, 256, false)).param).toBe("prompt");
        expect(refused(() => parseOllamaEmbed({ model: "m", prompt: "a", input: "a" }, 256, true)).param).toBe("input");
        expect(refused(() => parseOllamaShow({ model: "m", license: "x" })).param).toBe("license");
        expect(refused(() => parseOllamaChat({ model: "m", messages: [{ role: "user", content: "x", name: "a" }] }, 256))).toEqual({
            message:
                "messages[0].name is not a field Kvault serves here; leave it out. The fields served are role, content, images, tool_calls, thinking, tool_name.",
            param: "messages[0].name",
            code: null
        });
        expect(refused(() => parseOllamaOptions({ num_gpu: 1 }, 256)).message).toBe(
            "options.num_gpu is not a field Kvault serves here; leave it out. The fields served are num_predict, temperature, top_k, top_p, min_p, repeat_penalty, presence_penalty, frequency_penalty, repeat_last_n, seed, stop, num_ctx."
        );
        expect(refused(() => parseOllamaEmbed({ model: "m", input: "a", options: { temperature: 0 } }, 256, false)).message).toBe(
            "options.temperature is not a field Kvault serves here; leave it out. The fields served are num_ctx."
        );
    });

    it("refuses a body or options that is not an object", () => {
        expect(refused(() => parseOllamaChat([], 256))).toEqual({
            message: "The request body must be a JSON object.",
            param: null,
            code: null
        });
        expect(refused(() => parseOllamaShow("m")).param).toBeNull();
        expect(refused(() => parseOllamaOptions([1], 256))).toEqual({
            message: "options must be a JSON object.",
            param: "options",
            code: null
        });
        expect(refused(() => parseOllamaChat({ model: "m", messages: ["Hi"] }, 256)).message).toBe("messages[0] must be a JSON object.");
    });
});

describe("Ollama's chat", () => {
    it("refuses think: true and tools, accepting their neutral values", () => {
        expect(refused(() => parseOllamaChat({ model: "m", messages, think: true }, 256))).toEqual({
            message: "think is not served: Kvault does not separate a model's thinking from its answer; send false or leave it out.",
            param: "think",
            code: null
        });
        expect(refused(() => parseOllamaChat({ model: "m", messages, tools: [{ type: "function" }] }, 256)).message).toBe(
            "tools is not served: Kvault does not call tools on this endpoint yet; leave tools out."
        );
        expect(parseOllamaChat({ model: "m", messages, think: false, tools: [], keep_alive: "5m" }, 256).model).toBe("m");
        expect(parseOllamaChat({ model: "m", messages, think: null, tools: null, format: "" }, 256).sampling.grammar).toBeUndefined();
    });

    it("reads messages: count, roles, the last one the user's, each content within the limit", () => {
        expect(refused(() => parseOllamaChat({ model: "m", messages: [] }, 256))).toEqual({
            message: `messages must be a list of 1 to ${turnLimits.maxMessages} messages.`,
            param: "messages",
            code: null
        });
        expect(refused(() => parseOllamaChat({ model: "m" }, 256)).param).toBe("messages");
        expect(refused(() => parseOllamaChat({ model: "m", messages: [{ role: "tool", content: "x" }] }, 256))).toEqual({
            message: 'messages[0].role must be "system", "user" or "assistant"; got "tool".',
            param: "messages[0].role",
            code: null
        });
        expect(refused(() => parseOllamaChat({ model: "m", messages: [{ role: "user", content: 7 }] }, 256))).toEqual({
            message: "messages[0].content must be a string; got 7.",
            param: "messages[0].content",
            code: null
        });
        expect(
            refused(() =>
                parseOllamaChat(
                    {
                        model: "m",
                        messages: [
                            { role: "user", content: "x" },
                            { role: "assistant", content: "y" }
                        ]
                    },
                    256
                )
            )
        ).toEqual({ message: 'The last message must have role "user": the model answers it.', param: "messages[1].role", code: null });
        expect(refused(() => parseOllamaChat({ model: "m", messages: [{ role: "user", content: "x", thinking: "t" }] }, 256)).message).toBe(
            "messages[0].thinking is not served: leave thinking out."
        );
        expect(
            refused(() => parseOllamaChat({ model: "m", messages: [{ role: "user", content: "x", tool_calls: [{}] }] }, 256)).message
        ).toBe("messages[0].tool_calls is not served: Kvault runs text chats without tools; leave tool_calls out.");
        expect(
            parseOllamaChat(
                {
                    model: "m",
                    messages: [
                        { role: "system", content: "S" },
                        { role: "user", images: [], tool_calls: null, thinking: "", tool_name: "" }
                    ]
                },
                256
            ).messages
        ).toEqual([
            { role: "system", content: "S" },
            { role: "user", content: "" }
        ]);
    });

    it("names the message a problem is in, a missing role, and a content over the limit with its numbers", () => {
        const over = "x".repeat(turnLimits.maxMessageChars + 1);
        expect(
            refused(() =>
                parseOllamaChat(
                    {
                        model: "m",
                        messages: [
                            { role: "system", content: "S" },
                            { role: "user", content: "x", images: ["a"] }
                        ]
                    },
                    256
                )
            )
        ).toEqual({
            message: "messages[1].images is not served: Kvault runs text chats without tools; leave images out.",
            param: "messages[1].images",
            code: null
        });
        expect(refused(() => parseOllamaChat({ model: "m", messages: [{ content: "x" }] }, 256))).toEqual({
            message: 'messages[0].role must be "system", "user" or "assistant"; got undefined.',
            param: "messages[0].role",
            code: null
        });
        expect(refused(() => parseOllamaChat({ model: "m", messages: [{ role: "user", content: over }] }, 256))).toEqual({
            message: `messages[0].content has ${(turnLimits.maxMessageChars + 1).toLocaleString("en-US")} characters; the limit is ${turnLimits.maxMessageChars.toLocaleString("en-US")}.`,
            param: "messages[0].content",
            code: null
        });
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: over }, 256)).param).toBe("prompt");
    });

    it("needs a model and reads stream as true or false", () => {
        expect(refused(() => parseOllamaChat({ messages }, 256))).toEqual({
            message: "model is required: use a name from GET /api/tags.",
            param: "model",
            code: null
        });
        expect(refused(() => parseOllamaChat({ model: "", messages }, 256)).param).toBe("model");
        expect(refused(() => parseOllamaChat({ model: "m", messages, stream: "no" }, 256))).toEqual({
            message: "stream must be true or false.",
            param: "stream",
            code: null
        });
        expect(parseOllamaChat({ model: "m", messages, stream: false }, 256).stream).toBe(false);
        expect(refused(() => parseOllamaChat({ model: "m", messages, format: ["json"] }, 256)).message).toBe(
            'format must be "json" or a JSON schema object; got a list of 1.'
        );
    });
});

describe("Ollama's generate", () => {
    it("refuses suffix, template, context and images, accepting their neutral values", () => {
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", suffix: "b" }, 256)).message).toBe(
            "suffix is not served: Kvault does not fill in the middle; leave suffix out."
        );
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", template: "{{ .Prompt }}" }, 256)).message).toBe(
            "template is not served: Kvault renders with the model's own chat template; use raw: true to send your own."
        );
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", images: ["x"] }, 256))).toEqual({
            message: "images is not served: Kvault runs text models only.",
            param: "images",
            code: null
        });
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", think: true }, 256)).param).toBe("think");
        expect(
            parseOllamaGenerate({ model: "m", prompt: "a", suffix: "", template: "", context: [], images: [], keep_alive: 0 }, 256).messages
        ).toEqual([{ role: "user", content: "a" }]);
    });

    it("reads prompt, system and raw: system with raw is refused, a prompt must be text", () => {
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", system: "S", raw: true }, 256))).toEqual({
            message: "system is applied by the chat template, which raw: true leaves out; put it in the prompt instead.",
            param: "system",
            code: null
        });
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: ["a"] }, 256))).toEqual({
            message: "prompt must be a string; got a list of 1.",
            param: "prompt",
            code: null
        });
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", system: 1 }, 256)).param).toBe("system");
        expect(refused(() => parseOllamaGenerate({ model: "m", prompt: "a", raw: "yes" }, 256)).message).toBe("raw must be true or false.");
        expect(refused(() => parseOllamaGenerate({ prompt: "a" }, 256)).param).toBe("model");
        expect(parseOllamaGenerate({ model: "m", prompt: "", system: "S" }, 256)).toMatchObject({ loadOnly: true, stream: true });
        expect(parseOllamaGenerate({ model: "m", prompt: null, stream: false }, 256)).toMatchObject({ loadOnly: true, stream: false });
        expect(parseOllamaGenerate({ model: "m", prompt: "a", format: "json" }, 256).sampling.grammar).toEqual({ kind: "json" });
    });
});

describe("Ollama's embed and show", () => {
    it("reads /api/embed and /api/embeddings: inputs, truncate false only, num_ctx only, dimensions", () => {
        expect(parseOllamaEmbed({ model: "m", input: ["a", "b"], truncate: false, keep_alive: "1m" }, 256, false)).toEqual({
            model: "m",
            inputs: ["a", "b"]
        });
        expect(parseOllamaEmbed({ model: "m", prompt: "a", options: { num_ctx: 128 } }, 256, true)).toEqual({ model: "m", inputs: ["a"] });
        // the legacy answer holds one vector: a list of prompts would lose all but its first
        expect(refused(() => parseOllamaEmbed({ model: "m", prompt: ["a", "b"] }, 256, true))).toEqual({
            message:
                "prompt must be one string: /api/embeddings answers one vector; got a list of 2. For several inputs, use /api/embed with input: [...].",
            param: "prompt",
            code: null
        });
        expect(refused(() => parseOllamaEmbed({ model: "m", prompt: [1, 2, 3] }, 256, true)).param).toBe("prompt");
        expect(parseOllamaEmbed({ model: "m", input: "a", dimensions: 8 }, 256, false).dimensions).toBe(8);
        expect(refused(() => parseOllamaEmbed({ model: "m", input: "a", truncate: true }, 256, false))).toEqual({
            message: "truncate is not served: Kvault refuses an input over the window rather than cut it; send false or leave it out.",
            param: "truncate",
            code: null
        });
        expect(refused(() => parseOllamaEmbed({ model: "m", input: "a", dimensions: 0 }, 256, false))).toEqual({
            message: "dimensions must be a whole number of at least 1; got 0.",
            param: "dimensions",
            code: null
        });
        expect(refused(() => parseOllamaEmbed({ model: "m", input: "a", dimensions: "8" }, 256, false)).message).toBe(
            'dimensions must be a whole number of at least 1; got "8".'
        );
        expect(refused(() => parseOllamaEmbed({ model: "m", input: "a", options: { num_ctx: 512 } }, 256, false)).param).toBe(
            "options.num_ctx"
        );
        expect(refused(() => parseOllamaEmbed({ model: "m", input: "a", options: 3 }, 256, false)).message).toBe(
            "options must be a JSON object."
        );
        expect(refused(() => parseOllamaEmbed({ model: "m" }, 256, false)).param).toBe("input");
        expect(refused(() => parseOllamaEmbed({ model: "m", prompt: 5 }, 256, true)).param).toBe("prompt");
        expect(refused(() => parseOllamaEmbed({ input: "a" }, 256, false)).param).toBe("model");
    });

    it("reads /api/show: model or name, verbose true or false, Modelfile fields refused", () => {
        expect(parseOllamaShow({ model: "m", verbose: true })).toBe("m");
        expect(parseOllamaShow({ name: "n" })).toBe("n");
        expect(parseOllamaShow({ model: "m", name: "n" })).toBe("m");
        expect(refused(() => parseOllamaShow({ model: "m", system: "S" }))).toEqual({
            message: "system is not served: Kvault does not build models from a Modelfile; leave system out.",
            param: "system",
            code: null
        });
        expect(refused(() => parseOllamaShow({ model: "m", options: {} })).param).toBe("options");
        expect(refused(() => parseOllamaShow({ model: "m", verbose: 1 })).message).toBe("verbose must be true or false.");
        expect(refused(() => parseOllamaShow({})).message).toBe("model is required: use a name from GET /api/tags.");
    });
});

describe("Ollama's options", () => {
    it("reads each served option within its range, with Ollama's defaults", () => {
        expect(
            parseOllamaOptions({ num_predict: -2, top_k: 5, top_p: 0.5, seed: -1, presence_penalty: 1, frequency_penalty: -1 }, 256)
        ).toEqual({
            temperature: 0.8,
            topK: 5,
            topP: 0.5,
            seed: 2 ** 32 - 1,
            maxTokens: DEFAULT_OLLAMA_PREDICT,
            stop: undefined,
            minP: undefined,
            repeatPenalty: undefined,
            presencePenalty: 1,
            frequencyPenalty: -1,
            repeatLastTokens: undefined
        });
        expect(parseOllamaOptions({ stop: "x", num_ctx: 100 }, 256).stop).toEqual(["x"]);
        expect(parseOllamaOptions(null, 256).maxTokens).toBe(DEFAULT_OLLAMA_PREDICT);
    });

    it("refuses each option out of range with its numbers", () => {
        expect(refused(() => parseOllamaOptions({ num_ctx: 4096 }, 256))).toEqual({
            message:
                "options.num_ctx is 4,096 tokens; this server's window is 256. Ask for at most that, or restart Kvault with a larger --context.",
            param: "options.num_ctx",
            code: null
        });
        expect(refused(() => parseOllamaOptions({ num_ctx: 0 }, 256)).message).toBe(
            "options.num_ctx must be a number from 1 to 9007199254740991; got 0."
        );
        expect(refused(() => parseOllamaOptions({ num_predict: 0 }, 256))).toEqual({
            message: "options.num_predict is 0; ask for at least 1 token, or -1 for the default.",
            param: "options.num_predict",
            code: null
        });
        expect(refused(() => parseOllamaOptions({ num_predict: 1.5 }, 256)).message).toBe(
            "options.num_predict must be a whole number; got 1.5."
        );
        expect(refused(() => parseOllamaOptions({ temperature: 3 }, 256))).toEqual({
            message: "options.temperature must be a number from 0 to 2; got 3.",
            param: "options.temperature",
            code: null
        });
        expect(refused(() => parseOllamaOptions({ top_p: "1" }, 256)).message).toBe('options.top_p must be a number from 0 to 1; got "1".');
        expect(refused(() => parseOllamaOptions({ repeat_last_n: -1 }, 256)).message).toBe(
            "options.repeat_last_n must be a number from 0 to 4096; got -1."
        );
        expect(refused(() => parseOllamaOptions({ seed: 0.5 }, 256)).param).toBe("options.seed");
        expect(refused(() => parseOllamaOptions({ stop: [1] }, 256)).message).toBe(
            "options.stop must be a string or a list of up to 16 strings of at most 256 characters."
        );
    });
});
