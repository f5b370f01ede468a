import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";

describe("/tokenize and /detokenize in llama.cpp's server's shape", () => {
    let api: InProcessApiServer;
    let url: string;
    const post = (pathname: string, body: unknown, key = API_KEY): Promise<Response> =>
        fetch(url + pathname, {
            method: "POST",
            headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
            body: JSON.stringify(body)
        });

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: { requestTimeoutMs: httpDefaults.requestTimeoutMs }
        });
        url = api.url;
    });
    afterAll(async () => {
        await api?.close();
    });

    it("tokenizes as node-llama-cpp's own tokenizer does, and detokenizes back to the text", async () => {
        const content = "Pages of KV, kept apart: ünïcödé and 漢字.";
        const model = api.service.engine.model;
        const own = model.tokenize(content, true);

        const plain = await post("/tokenize", { content });
        expect(plain.status).toBe(200);
        const { tokens } = (await plain.json()) as { tokens: number[] };
        expect(tokens).toEqual([...own]);

        const withBos = (await (await post("/tokenize", { content, add_special: true })).json()) as { tokens: number[] };
        const bos = model.tokens.bos;
        expect(withBos.tokens).toEqual(bos !== null && model.tokens.shouldPrependBosToken ? [bos, ...own] : [...own]);

        const back = await post("/detokenize", { tokens });
        expect(back.status).toBe(200);
        expect(await back.json()).toEqual({ content: model.detokenize(own, true) });
        // (the generated test model has no space token, so its own round trip drops spaces; the endpoint gives what it gives)

        const pieces = (await (await post("/tokenize", { content, with_pieces: true })).json()) as {
            tokens: { id: number; piece: string | number[] }[];
        };
        expect(pieces.tokens.map((token) => token.id)).toEqual(tokens);
        for (const { id, piece } of pieces.tokens) {
            // each piece is the token's own text, or its bytes when they are part of a character
            const own = model.detokenize([id] as unknown as Parameters<typeof model.detokenize>[0], true);
            expect(typeof piece === "string" ? piece : "\uFFFD").toBe(own.includes("\uFFFD") ? "\uFFFD" : own);
        }
    });

    it("is keyed, and refuses what it does not serve by name", async () => {
        expect((await post("/tokenize", { content: "x" }, "wrong-key-0123456789")).status).toBe(401);
        const refused = async (pathname: string, body: unknown): Promise<{ status: number; param: string | null }> => {
            const answer = await post(pathname, body);
            return { status: answer.status, param: ((await answer.json()) as { error: { param: string | null } }).error.param };
        };
        expect(await refused("/tokenize", { content: "x", add_bos: true })).toEqual({ status: 400, param: "add_bos" });
        expect(await refused("/tokenize", { content: "x", parse_special: false })).toEqual({ status: 400, param: "parse_special" });
        expect(await refused("/tokenize", {})).toEqual({ status: 400, param: "content" });
        expect(await refused("/detokenize", { tokens: [-1] })).toEqual({ status: 400, param: "tokens" });
        expect((await refused("/detokenize", { tokens: [1_000_000] })).status).toBe(400);
        expect(await refused("/tokenize", { content: "x", model: "other" })).toEqual({ status: 404, param: "model" });
    });

    it("counts a conversation in vLLM's chat shape as a chat turn's prompt is counted", async () => {
        const messages = [
            { role: "system", content: "Answer briefly." },
            { role: "user", content: "What is a page?" },
            { role: "assistant", content: "Sixteen tokens of KV." },
            { role: "user", content: [{ type: "text", text: "And a sequence?" }] }
        ];
        const answer = await post("/tokenize", { model: "tiny", messages, add_generation_prompt: true });
        expect(answer.status).toBe(200);
        const counted = (await answer.json()) as { count: number; max_model_len: number; tokens: number[] };
        const chat = await post("/v1/chat/completions", { model: "tiny", messages, max_tokens: 1, temperature: 0 });
        expect(chat.status).toBe(200);
        const { prompt_tokens } = ((await chat.json()) as { usage: { prompt_tokens: number } }).usage;
        expect(counted.count).toBe(prompt_tokens);
        expect(counted.tokens).toHaveLength(counted.count);
        expect(counted.max_model_len).toBe(api.service.engine.window.limit);
        // a conversation may end with the assistant's message (what a meter counts before the draft)
        const before = (await (await post("/tokenize", { messages: messages.slice(0, 3) })).json()) as { count: number };
        expect(before.count).toBeGreaterThan(0);
        expect(before.count).toBeLessThan(counted.count);

        const refused = async (body: unknown): Promise<{ status: number; param: string | null }> => {
            const response = await post("/tokenize", body);
            return { status: response.status, param: ((await response.json()) as { error: { param: string | null } }).error.param };
        };
        expect(await refused({ messages, add_generation_prompt: false })).toEqual({ status: 400, param: "add_generation_prompt" });
        expect(await refused({ messages, chat_template: "{{ x }}" })).toEqual({ status: 400, param: "chat_template" });
        expect(await refused({ messages: [{ role: "tool", content: "42" }] })).toEqual({ status: 400, param: "messages[0]" });
        expect(await refused({ messages: [] })).toEqual({ status: 400, param: "messages" });
    });
});
