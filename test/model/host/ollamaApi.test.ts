import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";

/** What the ollama client throws for a non-2xx answer: Ollama's `{"error": …}` message and the status. */
interface ResponseError {
    readonly error: string;
    readonly status_code: number;
}

async function refusal(promise: Promise<unknown>): Promise<ResponseError> {
    const caught = await promise.then(
        () => undefined,
        (error: unknown) => error
    );
    expect(caught, "the request should have been refused").toBeDefined();
    return caught as ResponseError;
}

describe("Ollama's API on the same port, driven by the official ollama client", () => {
    let api: InProcessApiServer;
    let ollama: Ollama;
    let url: string;

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: { requestTimeoutMs: 60_000 }
        });
        url = api.url;
        ollama = new Ollama({ host: url, headers: { Authorization: `Bearer ${API_KEY}` } });
    });
    afterAll(async () => {
        await api?.close();
    });

    it("lists, shows and reports the loaded model, and its version; only with the key", async () => {
        expect((await ollama.version()).version).toMatch(/^\d+\.\d+\.\d+$/);
        const { models } = await ollama.list();
        expect(models.map((model) => model.name)).toEqual(["tiny"]);
        expect(models[0]!.size).toBeGreaterThan(0);
        expect(models[0]!.details.format).toBe("gguf");
        expect((await ollama.ps()).models.map((model) => model.name)).toEqual(["tiny"]);
        const shown = await ollama.show({ model: "tiny:latest" });
        expect(shown.model_info).toMatchObject({ "kvault.context_length": 256, "kvault.embedding_length": 128 });

        const anonymous = new Ollama({ host: url });
        const refused = await refusal(anonymous.list());
        expect(refused.status_code).toBe(401);
        expect(typeof refused.error).toBe("string");
    });

    it("chats, streamed and not, with the same greedy text and the counts", async () => {
        const messages = [{ role: "user", content: "Tell me about pages." }];
        const options = { temperature: 0, num_predict: 8 };
        const whole = await ollama.chat({ model: "tiny", messages, options, stream: false });
        expect(whole.done).toBe(true);
        expect(whole.done_reason).toBe("length");
        expect(whole.eval_count).toBe(8);
        expect(whole.prompt_eval_count).toBeGreaterThan(5);
        expect(whole.message.role).toBe("assistant");

        let text = "";
        let last: { done: boolean; eval_count: number } | undefined;
        for await (const part of await ollama.chat({ model: "tiny", messages, options, stream: true })) {
            text += part.message.content;
            last = part;
        }
        expect(text).toBe(whole.message.content);
        expect(last).toMatchObject({ done: true, eval_count: 8 });
    });

    it("generates through the chat template, and raw without it, streamed and not", async () => {
        const options = { temperature: 0, num_predict: 6 };
        const templated = await ollama.generate({ model: "tiny", prompt: "Tell me about pages.", options, stream: false });
        const chatted = await ollama.chat({
            model: "tiny",
            messages: [{ role: "user", content: "Tell me about pages." }],
            options,
            stream: false
        });
        expect(templated.response).toBe(chatted.message.content);

        const raw = await ollama.generate({ model: "tiny", prompt: "Pages are", raw: true, options, stream: false });
        expect(raw.prompt_eval_count).toBe(api.service.engine.tokenize("Pages are").length + 1); // BOS and the prompt, no template
        let streamed = "";
        for await (const part of await ollama.generate({ model: "tiny", prompt: "Pages are", raw: true, options, stream: true })) {
            streamed += part.response;
        }
        expect(streamed).toBe(raw.response);
    });

    it("constrains the answer to JSON with format, through the grammar", async () => {
        const options = { temperature: 0, num_predict: 48 };
        const answer = await ollama.generate({ model: "tiny", prompt: "A JSON object, please.", format: "json", options, stream: false });
        // a random-weight model under the JSON grammar: JSON all the way, or cut by num_predict mid-way
        const text = answer.response ?? "";
        expect(text.trimStart().startsWith("{")).toBe(true);
        if (answer.done_reason === "stop") {
            expect(() => JSON.parse(text) as unknown).not.toThrow();
        }
    });

    it("embeds: the same text gives the same vector, of the model's width; the legacy endpoint agrees", async () => {
        const first = await ollama.embed({ model: "tiny", input: "isolated pages" });
        const batch = await ollama.embed({ model: "tiny", input: ["other words", "isolated pages"] });
        expect(first.embeddings[0]).toHaveLength(128);
        expect(batch.embeddings[1]).toEqual(first.embeddings[0]);
        expect(batch.embeddings[0]).not.toEqual(first.embeddings[0]);
        expect((await ollama.embeddings({ model: "tiny", prompt: "isolated pages" })).embedding).toEqual(first.embeddings[0]);
    });

    it("refuses a list as the legacy /api/embeddings' prompt, whose answer holds one vector, rather than drop all but the first", async () => {
        const response = await fetch(`${url}/api/embeddings`, {
            method: "POST",
            headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
            body: JSON.stringify({ model: "tiny", prompt: ["other words", "isolated pages"] })
        });
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: string }).error).toBe(
            "prompt must be one string: /api/embeddings answers one vector; got a list of 2. For several inputs, use /api/embed with input: [...]."
        );
    });

    it("refuses by name what it does not serve: options, format, num_ctx above the window, another model", async () => {
        const messages = [{ role: "user", content: "Hi" }];
        const unknown = await refusal(ollama.chat({ model: "tiny", messages, options: { mirostat: 1 }, stream: false }));
        expect(unknown).toMatchObject({ status_code: 400 });
        expect(unknown.error).toMatch(/options\.mirostat is not a field Kvault serves/);
        const window = await refusal(ollama.chat({ model: "tiny", messages, options: { num_ctx: 8192 }, stream: false }));
        expect(window.error).toMatch(/options\.num_ctx is 8,192 tokens; this server's window is 256/);
        const schema = { type: "string", pattern: "a+" };
        expect((await refusal(ollama.chat({ model: "tiny", messages, format: schema, stream: false }))).error).toMatch(/^format.*pattern/);
        expect((await refusal(ollama.generate({ model: "tiny", prompt: "a", suffix: "b", stream: false }))).error).toMatch(/^suffix/);
        const other = await refusal(ollama.chat({ model: "llama3", messages, stream: false }));
        expect(other).toMatchObject({ status_code: 404 });
        expect(other.error).toMatch(/this server runs "tiny"/);
        const tooLong = await refusal(
            ollama.chat({ model: "tiny", messages: [{ role: "user", content: "pages ".repeat(400) }], stream: true })
        );
        expect(tooLong.error).toMatch(/the limit is 256/);
        expect((await refusal(ollama.embed({ model: "tiny", input: "a", truncate: true }))).error).toMatch(/^truncate is not served/);
    });
});
