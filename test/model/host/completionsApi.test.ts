import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineService } from "../../../engine/service/EngineService.js";
import { startTinyApiServer, type TinyApiServer } from "./tinyApiServer.js";

const API_KEY = "test-key-0123456789";

/** The tiny model's embedding width (its n_embd). */
const TINY_DIMENSIONS = 128;

describe("/v1/completions and /v1/embeddings, driven by the official openai client", () => {
    let service: EngineService;
    let url: string;
    let client: OpenAI;
    const post = (pathname: string, body: unknown): Promise<Response> =>
        fetch(url + pathname, {
            method: "POST",
            headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
            body: JSON.stringify(body)
        });
    const refusal = async (pathname: string, body: unknown): Promise<{ status: number; param: unknown; message: string }> => {
        const response = await post(pathname, body);
        const { error } = (await response.json()) as { error: { param: unknown; message: string } };
        return { status: response.status, param: error.param, message: error.message };
    };

    let api: TinyApiServer;

    beforeAll(async () => {
        api = await startTinyApiServer(API_KEY);
        ({ service, url, client } = api);
    });
    afterAll(async () => {
        await api?.close();
    });

    it("continues a text prompt without the chat template, streamed and not, with the same greedy text", async () => {
        const whole = await client.completions.create({ model: "tiny", prompt: "Pages are", max_tokens: 6, temperature: 0 });
        expect(whole.object).toBe("text_completion");
        expect(whole.choices[0]!.finish_reason).toBe("length");
        expect(whole.usage).toMatchObject({ completion_tokens: 6 });
        // BOS and the prompt's own tokens, no template around them
        const promptTokens = service.engine.tokenize("Pages are").length + 1;
        expect(whole.usage!.prompt_tokens).toBe(promptTokens);

        const stream = await client.completions.create({
            model: "tiny",
            prompt: "Pages are",
            max_tokens: 6,
            temperature: 0,
            stream: true,
            stream_options: { include_usage: true }
        });
        let text = "";
        let finishReason: string | null = null;
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) {
            text += chunk.choices[0]?.text ?? "";
            finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
            usage = chunk.usage ?? usage;
        }
        expect(text).toBe(whole.choices[0]!.text);
        expect(finishReason).toBe("length");
        expect(usage).toMatchObject({ completion_tokens: 6, prompt_tokens: promptTokens });
    });

    it("takes the prompt as token ids, echoes a text prompt, and reports legacy logprobs", async () => {
        const tokens = [1, ...service.engine.tokenize("Pages are")]; // 1: the tiny model's BOS
        const fromTokens = await client.completions.create({ model: "tiny", prompt: tokens, max_tokens: 5, temperature: 0 });
        const fromText = await client.completions.create({ model: "tiny", prompt: "Pages are", max_tokens: 5, temperature: 0 });
        expect(fromTokens.choices[0]!.text).toBe(fromText.choices[0]!.text);
        expect(fromTokens.usage!.prompt_tokens).toBe(tokens.length);

        const echoed = await client.completions.create({ model: "tiny", prompt: "Pages are", max_tokens: 5, temperature: 0, echo: true });
        expect(echoed.choices[0]!.text).toBe("Pages are" + fromText.choices[0]!.text);

        const withLogprobs = await client.completions.create({
            model: "tiny",
            prompt: "Pages are",
            max_tokens: 5,
            temperature: 0,
            logprobs: 2
        });
        const logprobs = withLogprobs.choices[0]!.logprobs!;
        expect(logprobs.tokens).toHaveLength(5);
        expect(logprobs.tokens!.join("")).toBe(withLogprobs.choices[0]!.text);
        expect(logprobs.text_offset![0]).toBe(0);
        for (const [index, top] of logprobs.top_logprobs!.entries()) {
            expect(Object.keys(top)).toHaveLength(2);
            expect(Math.max(...Object.values(top))).toBeCloseTo(logprobs.token_logprobs![index]!, 6); // greedy: the argmax
        }
    });

    it("refuses by name what it does not serve, and a prompt over the window with the numbers", async () => {
        expect(await refusal("/v1/completions", { model: "tiny", prompt: "a", suffix: "b" })).toMatchObject({
            status: 400,
            param: "suffix"
        });
        expect(await refusal("/v1/completions", { model: "tiny", prompt: "a", n: 2 })).toMatchObject({ status: 400, param: "n" });
        expect(await refusal("/v1/completions", { model: "tiny", prompt: "a", best_of: 3 })).toMatchObject({
            status: 400,
            param: "best_of"
        });
        expect(await refusal("/v1/completions", { model: "tiny", prompt: ["a", "b"] })).toMatchObject({ status: 400, param: "prompt" });
        expect(await refusal("/v1/completions", { model: "tiny", prompt: "a", mirostat: 1 })).toMatchObject({
            status: 400,
            param: "mirostat"
        });
        expect(await refusal("/v1/completions", { model: "tiny", prompt: [1, 99_999] })).toMatchObject({ status: 400 });
        const tooLong = await refusal("/v1/completions", { model: "tiny", prompt: "pages ".repeat(400), max_tokens: 8 });
        expect(tooLong).toMatchObject({ status: 400, param: "prompt" });
        expect(tooLong.message).toMatch(/needs [\d,]+ tokens .* the limit is 256/);
        expect(await refusal("/v1/completions", { model: "other", prompt: "a" })).toMatchObject({ status: 404, param: "model" });
    });

    it("embeds: the same text gives the same vector, base64 decodes to the same floats, batches keep their order", async () => {
        const first = await client.embeddings.create({ model: "tiny", input: "isolated pages", encoding_format: "float" });
        const again = await client.embeddings.create({ model: "tiny", input: "isolated pages", encoding_format: "float" });
        const vector = first.data[0]!.embedding;
        expect(vector).toHaveLength(TINY_DIMENSIONS);
        expect(again.data[0]!.embedding).toEqual(vector);
        expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
        expect(first.usage.prompt_tokens).toBeGreaterThan(1);

        // the openai client asks for base64 by default and decodes it to floats itself
        const decoded = await client.embeddings.create({ model: "tiny", input: "isolated pages" });
        expect(decoded.data[0]!.embedding).toEqual(vector.map((value) => Math.fround(value)));

        const batch = await client.embeddings.create({
            model: "tiny",
            input: ["other words", "isolated pages"],
            encoding_format: "float",
            dimensions: TINY_DIMENSIONS
        });
        expect(batch.data.map((entry) => entry.index)).toEqual([0, 1]);
        expect(batch.data[1]!.embedding).toEqual(vector);
        expect(batch.data[0]!.embedding).not.toEqual(vector);

        const fromTokens = await client.embeddings.create({
            model: "tiny",
            input: service.engine.tokenize("isolated pages"),
            encoding_format: "float"
        });
        expect(fromTokens.data[0]!.embedding).toHaveLength(TINY_DIMENSIONS);
    });

    it("refuses other dimensions, an input over the embedding context, and unknown fields, naming them", async () => {
        expect(await refusal("/v1/embeddings", { model: "tiny", input: "a", dimensions: 64 })).toMatchObject({
            status: 400,
            param: "dimensions"
        });
        expect(await refusal("/v1/embeddings", { model: "tiny", input: "a", encoding_format: "int8" })).toMatchObject({
            status: 400,
            param: "encoding_format"
        });
        expect(await refusal("/v1/embeddings", { model: "tiny", input: "a", truncate: true })).toMatchObject({
            status: 400,
            param: "truncate"
        });
        const tooLong = await refusal("/v1/embeddings", { model: "tiny", input: ["short", "pages ".repeat(400)] });
        expect(tooLong.status).toBe(400);
        expect(tooLong.message).toMatch(/Input 1 is [\d,]+ tokens; the embedding context holds 256/);
    });
});
