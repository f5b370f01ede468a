import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPresets } from "../../../synthetic/model/modelPresets.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";

const schema = {
    type: "object",
    properties: {
        color: { enum: ["red", "green", "blue"] },
        done: { type: "boolean" },
        tag: { type: "string", maxLength: 4 },
        sizes: { type: "array", items: { enum: ["s", "m", "l"] }, maxItems: 2 }
    },
    required: ["color", "done", "tag", "sizes"],
    additionalProperties: false
} as const;

/** The schema's own rules, checked by hand: the answer must be JSON of exactly this shape. */
function matchesSchema(value: unknown): boolean {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return false;
    }
    const answer = value as Record<string, unknown>;
    return (
        Object.keys(answer).sort().join(",") === "color,done,sizes,tag" &&
        ["red", "green", "blue"].includes(answer.color as string) &&
        typeof answer.done === "boolean" &&
        typeof answer.tag === "string" &&
        [...answer.tag].length <= 4 && // code points, as JSON schema counts them
        Array.isArray(answer.sizes) &&
        answer.sizes.length <= 2 &&
        answer.sizes.every((size) => ["s", "m", "l"].includes(size as string))
    );
}

describe("the OpenAI API's sampling fields and structured output, driven by the official openai client", () => {
    let api: InProcessApiServer;
    let client: OpenAI;
    const messages = [{ role: "user" as const, content: "A shirt?" }];

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: { requestTimeoutMs: 60_000 }
        });
        const { url } = api;
        client = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    });
    afterAll(async () => {
        await api?.close();
    });

    it("answers JSON of the json_schema even from random weights, greedy and not, streamed and not", async () => {
        const whole = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 120,
            temperature: 0,
            response_format: { type: "json_schema", json_schema: { name: "shirt", schema, strict: true } }
        });
        expect(whole.choices[0]!.finish_reason).toBe("stop");
        const text = whole.choices[0]!.message.content!;
        expect(matchesSchema(JSON.parse(text)), text).toBe(true);

        const stream = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 120,
            temperature: 1,
            seed: 7,
            stream: true,
            response_format: { type: "json_schema", json_schema: { name: "shirt", schema } }
        });
        let streamed = "";
        for await (const chunk of stream) {
            streamed += chunk.choices[0]?.delta.content ?? "";
        }
        expect(matchesSchema(JSON.parse(streamed)), streamed).toBe(true);
    }, 300_000);

    it("answers a JSON object for json_object", async () => {
        const whole = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 200,
            temperature: 0,
            response_format: { type: "json_object" }
        });
        const text = whole.choices[0]!.message.content!;
        if (whole.choices[0]!.finish_reason === "stop") {
            const parsed: unknown = JSON.parse(text);
            expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed), text).toBe(true);
        } else {
            // cut by max_tokens: still the start of a JSON object
            expect(text.trimStart().startsWith("{"), text).toBe(true);
        }
    });

    it("without a grammar the same random weights do not write JSON (the grammar is what made it)", async () => {
        const whole = await client.chat.completions.create({ model: "tiny", messages, max_tokens: 40, temperature: 0 });
        expect(() => JSON.parse(whole.choices[0]!.message.content!)).toThrow();
    });

    it("serves logit_bias: a token biased by +100 is the whole greedy answer; -100 bans the greedy choice", async () => {
        const plain = await client.chat.completions.create({ model: "tiny", messages, max_tokens: 4, temperature: 0, logprobs: true });
        const firstToken = plain.choices[0]!.logprobs!.content![0]!.token;
        // the renderer's model, for the token's id (its field is private to the engine, not hidden at run time)
        const model = (api.service.renderer as unknown as { model: { detokenize(tokens: number[], special: boolean): string } }).model;
        const vocabulary = modelPresets.tiny.vocabularySize;
        let id = -1;
        for (let candidate = 0; candidate < vocabulary && id < 0; candidate++) {
            if (model.detokenize([candidate], true) === firstToken) {
                id = candidate;
            }
        }
        expect(id).toBeGreaterThanOrEqual(0);
        const ids = [id];
        const banned = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 4,
            temperature: 0,
            logprobs: true,
            logit_bias: { [String(ids[0])]: -100 }
        });
        expect(banned.choices[0]!.logprobs!.content!.map((entry) => entry.token)).not.toContain(firstToken);

        const forced = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 3,
            temperature: 0,
            logit_bias: { [String(ids[0])]: 100 }
        });
        expect(forced.choices[0]!.message.content).toBe(firstToken.repeat(3));
    });

    it("serves the penalties: a strong repeat penalty changes a greedy answer that repeats itself", async () => {
        const plain = await client.chat.completions.create({ model: "tiny", messages, max_tokens: 24, temperature: 0 });
        const penalized = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 24,
            temperature: 0,
            // @ts-expect-error llama.cpp's fields, not in OpenAI's types
            repeat_penalty: 2,
            frequency_penalty: 2,
            presence_penalty: 2
        });
        expect(penalized.choices[0]!.message.content).not.toBe(plain.choices[0]!.message.content);
        const withTopK = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 8,
            temperature: 1,
            seed: 3,
            // @ts-expect-error llama.cpp's fields, not in OpenAI's types
            top_k: 1,
            min_p: 0.5
        });
        // top_k 1 is greedy whatever the temperature
        const greedy = await client.chat.completions.create({ model: "tiny", messages, max_tokens: 8, temperature: 0 });
        expect(withTopK.choices[0]!.message.content).toBe(greedy.choices[0]!.message.content);
    });

    it("refuses, with 400 naming it, every field it does not serve and a schema part it cannot enforce", async () => {
        const refused = async (extra: Record<string, unknown>): Promise<{ param: string | null; message: string }> => {
            try {
                await client.chat.completions.create({ model: "tiny", messages, max_tokens: 4, ...extra } as never);
            } catch (error) {
                expect(error).toBeInstanceOf(OpenAI.BadRequestError);
                const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
                return { param: bad.param ?? null, message: bad.message };
            }
            throw new Error(`accepted ${JSON.stringify(extra)}`);
        };
        for (const [field, value] of [
            ["audio", { voice: "alloy", format: "mp3" }],
            ["prediction", { type: "content", content: "x" }],
            ["modalities", ["text", "audio"]],
            ["reasoning_effort", "low"],
            ["web_search_options", {}],
            ["mirostat", 2]
        ] as const) {
            const answer = await refused({ [field]: value });
            expect(answer.param).toBe(field);
            expect(answer.message).toContain(field);
        }
        expect((await refused({ n: 2 })).param).toBe("n");
        // function tools are served (toolCallsApi.test.ts); other kinds are refused by name
        expect((await refused({ tools: [{ type: "custom", custom: { name: "f" } }] })).param).toBe("tools[0].type");
        expect((await refused({ tool_choice: "required" })).param).toBe("tool_choice");
        expect((await refused({ stream_options: { include_obfuscation: true } })).param).toBe("stream_options.include_obfuscation");
        expect((await refused({ messages: [{ role: "user", content: "hi", name: "eve" }] })).param).toBe("messages[0].name");

        const minimum = await refused({
            response_format: {
                type: "json_schema",
                json_schema: { name: "age", schema: { type: "object", properties: { age: { type: "integer", minimum: 0 } } } }
            }
        });
        expect(minimum.param).toBe("response_format.json_schema.schema.properties.age.minimum");
        expect(minimum.message).toContain("minimum");
        const pattern = await refused({
            response_format: { type: "json_schema", json_schema: { name: "p", schema: { type: "string", pattern: "^a+$" } } }
        });
        expect(pattern.param).toBe("response_format.json_schema.schema.pattern");
        expect((await refused({ logit_bias: { "1": 101 } })).param).toBe("logit_bias");
        expect((await refused({ top_k: -1 })).param).toBe("top_k");
        expect((await refused({ logit_bias: { "512": 1 } })).message).toContain("vocabulary");
    });

    it("ignores the fields clients send by default that change no answer", async () => {
        const answer = await client.chat.completions.create({
            model: "tiny",
            messages: [...messages.map((message) => ({ ...message })), { role: "assistant", content: "ok", refusal: null }, messages[0]!],
            max_tokens: 2,
            store: false,
            metadata: { run: "test" },
            parallel_tool_calls: true
        });
        expect(answer.choices[0]!.message.content).not.toBeNull();
    });
});
