import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Ollama } from "ollama";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listening, smallEngineArgs, startServe, stopServe, type ServeProcess } from "../../cli/serveProcess.js";
import { ensureFamilyModel, generatedModelPath } from "../../support/generatedModels.js";
import { startLlamaServer, type LlamaServer } from "../../support/llamaServer.js";

// Every endpoint of Kvault's API over its remote backends, end to end on loopback: Kvault's
// headless server (A) started with three backends — a real llama-server on the generated
// llama3-tiny (`ls`), a second llama-server on the same file with --embeddings (`le`: llama-server
// embeds only when started so) and a second Kvault (B) on the tiny model (`kv`). For each,
// A's `/v1/completions`, `/v1/embeddings` and Ollama's `/api/…` for `NAME/<model>` give the
// backend's own greedy answer and vectors. Without the forwarding each request would be A's
// "unknown model".
const KEY_A = "gateway-key-kvault-a";
const KEY_B = "gateway-key-kvault-b";
const TIMEOUT_MS = 300_000;
/**
 * A raw prompt whose greedy continuation on llama3-tiny's random weights is whole UTF-8:
 * llama-server's output parser refuses an answer that is not (and answers 500), as the last test shows.
 */
const PROMPT = "Tell me about pages.";

interface Backend {
    readonly asked: string;
    readonly model: string;
    url(): string;
    readonly key?: string;
}

type Json = Record<string, unknown>;

async function post(url: string, body: unknown, key?: string): Promise<{ status: number; json: Json }> {
    const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
        body: JSON.stringify(body)
    });
    return { status: response.status, json: (await response.json()) as Json };
}

/** A streamed text completion: its text, last finish reason, the models its chunks name, the usage, and whether it ended with [DONE]. */
async function streamedCompletion(
    url: string,
    body: Json,
    key: string
): Promise<{ text: string; finish: unknown; models: unknown[]; usage: unknown; done: boolean }> {
    const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } })
    });
    expect(response.status).toBe(200);
    const events = (await response.text()).split("\n\n").filter((event) => event.startsWith("data: "));
    let text = "";
    let finish: unknown = null;
    let usage: unknown;
    const models = new Set<unknown>();
    for (const event of events.slice(0, -1)) {
        const chunk = JSON.parse(event.slice(6)) as {
            model: unknown;
            choices: { text: string; finish_reason: unknown }[];
            usage?: unknown;
        };
        models.add(chunk.model);
        text += chunk.choices[0]?.text ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
    }
    return { text, finish, models: [...models], usage, done: events.at(-1) === "data: [DONE]" };
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    for (let waited = 0; waited < timeoutMs; waited += 50) {
        if (condition()) {
            return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${what} did not come within ${timeoutMs / 1000} s`);
}

const textOf = (json: Json): string => (json.choices as { text: string }[])[0]!.text;
const contentOf = (json: Json): string => (json.choices as { message: { content: string } }[])[0]!.message.content;
const vectorsOf = (json: Json): number[][] => (json.data as { embedding: number[] }[]).map((entry) => entry.embedding);

describe("Kvault's gateway serves every API endpoint for a backend's models (llama-server and another Kvault on loopback)", () => {
    let scratch: string;
    let llama: LlamaServer;
    let llamaEmbed: LlamaServer;
    let kvaultB: ServeProcess;
    let urlB: string;
    let kvaultA: ServeProcess;
    let urlA: string;
    let ollama: Ollama;
    const ls: Backend = { asked: "ls/llama3-tiny", model: "llama3-tiny", url: () => llama.url };
    const le: Backend = { asked: "le/llama3-tiny", model: "llama3-tiny", url: () => llamaEmbed.url };
    const kv: Backend = { asked: "kv/tiny", model: "tiny", url: () => urlB, key: KEY_B };
    const direct = (backend: Backend, endpoint: string, body: Json) =>
        post(`${backend.url()}/v1${endpoint}`, { ...body, model: backend.model }, backend.key);
    const viaA = (endpoint: string, body: Json) => post(`${urlA}${endpoint}`, body, KEY_A);

    beforeAll(async () => {
        scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-gateway-"));
        const model = ensureFamilyModel("llama3-tiny", "f16");
        [llama, llamaEmbed] = await Promise.all([
            startLlamaServer(model, ["--alias", "llama3-tiny", "--parallel", "2", "--ctx-size", "8192"]),
            startLlamaServer(model, ["--alias", "llama3-tiny", "--ctx-size", "2048", "--embeddings", "--pooling", "mean"])
        ]);
        kvaultB = startServe(
            ["--port", "0", "--data-dir", path.join(scratch, "b"), "--model", generatedModelPath("tiny"), ...smallEngineArgs],
            { KVAULT_API_KEY: KEY_B }
        );
        urlB = await listening(kvaultB);
        kvaultA = startServe(
            [
                "--port",
                "0",
                "--data-dir",
                path.join(scratch, "a"),
                "--model",
                generatedModelPath("tiny"),
                ...smallEngineArgs,
                "--backend",
                `ls=${llama.url}`,
                "--backend",
                `le=${llamaEmbed.url}`,
                "--backend",
                `kv=${urlB}/v1,key-env=KVAULT_B_KEY`
            ],
            { KVAULT_API_KEY: KEY_A, KVAULT_B_KEY: KEY_B }
        );
        urlA = await listening(kvaultA);
        ollama = new Ollama({ host: urlA, headers: { Authorization: `Bearer ${KEY_A}` } });
    }, TIMEOUT_MS);

    afterAll(async () => {
        await Promise.all([kvaultA && stopServe(kvaultA), kvaultB && stopServe(kvaultB), llama?.stop(), llamaEmbed?.stop()]);
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it.each([
        ["ls", ls],
        ["kv", kv]
    ])(
        "/v1/completions for %s: a greedy answer, streamed and not, is the backend's own, with its usage and the model as asked",
        async (_name, backend) => {
            const body = { prompt: PROMPT, temperature: 0, max_tokens: 8 };
            const own = await direct(backend, "/completions", body);
            expect(own.status).toBe(200);
            const whole = await viaA("/v1/completions", { ...body, model: backend.asked });
            expect(whole.status).toBe(200);
            expect(whole.json.model).toBe(backend.asked);
            expect(textOf(whole.json)).not.toBe("");
            expect(textOf(whole.json)).toBe(textOf(own.json));
            expect(whole.json.usage).toMatchObject({ completion_tokens: 8, prompt_tokens: (own.json.usage as Json).prompt_tokens });
            const stream = await streamedCompletion(`${urlA}/v1/completions`, { ...body, model: backend.asked }, KEY_A);
            expect(stream).toMatchObject({ text: textOf(own.json), finish: "length", models: [backend.asked], done: true });
            expect(stream.usage).toMatchObject({ completion_tokens: 8 });
        },
        TIMEOUT_MS
    );

    it.each([
        ["le", le],
        ["kv", kv]
    ])(
        "/v1/embeddings for %s: the backend's own vectors, in order, with the model as asked",
        async (_name, backend) => {
            const body = { input: ["A page of KV.", "Another workspace."] };
            const own = await direct(backend, "/embeddings", body);
            expect(own.status).toBe(200);
            const forwarded = await viaA("/v1/embeddings", { ...body, model: backend.asked });
            expect(forwarded.status).toBe(200);
            expect(forwarded.json.model).toBe(backend.asked);
            expect(vectorsOf(forwarded.json)).toHaveLength(2);
            expect(vectorsOf(forwarded.json)[0]!.length).toBeGreaterThan(0);
            expect(vectorsOf(forwarded.json)).toEqual(vectorsOf(own.json));
            expect(vectorsOf(forwarded.json)[0]).not.toEqual(vectorsOf(forwarded.json)[1]);
        },
        TIMEOUT_MS
    );

    it("a backend that cannot embed: its refusal comes back through both APIs, naming it and what it said", async () => {
        const refused = await viaA("/v1/embeddings", { model: ls.asked, input: "x" });
        // llama-server answers 501 without --embeddings; a backend's 5xx is the gateway's 502, its words kept
        expect(refused.status).toBe(502);
        expect((refused.json.error as { code: string; message: string }).code).toBe("backend_http_error");
        expect((refused.json.error as { message: string }).message).toMatch(/Backend "ls" answered 501 .*does not support embeddings/);
        const overOllama = await viaA("/api/embed", { model: ls.asked, input: "x" });
        expect(overOllama.status).toBe(502);
        expect(overOllama.json.error).toMatch(/Backend "ls" answered 501/);
    });

    it("Ollama's /api/tags and /api/ps list each backend's models beside the local one; /api/show and /v1/models/{id} say the window the backend states", async () => {
        const { models } = await ollama.list();
        expect(models.map((model) => model.name)).toEqual(["tiny", "ls/llama3-tiny", "le/llama3-tiny", "kv/tiny"]);
        expect((await ollama.ps()).models.map((model) => model.name)).toEqual(["tiny", "ls/llama3-tiny", "le/llama3-tiny", "kv/tiny"]);
        const shown = await ollama.show({ model: ls.asked });
        expect(shown.model_info).toMatchObject({
            "general.name": "llama3-tiny",
            "kvault.backend": "ls",
            "kvault.context_length": 4096
        });
        expect((await ollama.show({ model: kv.asked })).model_info).toMatchObject({ "kvault.context_length": 512 });
        const one = await fetch(`${urlA}/v1/models/kv/tiny`, { headers: { authorization: `Bearer ${KEY_A}` } });
        expect(await one.json()).toMatchObject({ id: "kv/tiny", owned_by: "backend:kv", max_model_len: 512 });
        const missing = await viaA("/api/show", { model: "kv/absent" });
        expect(missing.status).toBe(404);
        expect(missing.json.error).toBe('model "kv/absent" not found: backend "kv" lists "kv/tiny" (GET /api/tags).');
    });

    it.each([
        ["ls", ls],
        ["kv", kv]
    ])(
        "Ollama's /api/chat and /api/generate for %s: the backend's greedy chat answer and the counts it reported",
        async (_name, backend) => {
            // llama-server's Llama 3 output parser refuses some random-weight text (the remote workspace test's prompt passes)
            const messages = [{ role: "user", content: "Tell me about pages." }];
            const own = await direct(backend, "/chat/completions", { messages, temperature: 0, max_tokens: 12 });
            expect(own.status).toBe(200);
            const usage = own.json.usage as { prompt_tokens: number; completion_tokens: number };
            const options = { temperature: 0, num_predict: 12 };
            const chat = await viaA("/api/chat", { model: backend.asked, messages, options, stream: false });
            expect(chat.status).toBe(200);
            expect(chat.json).toMatchObject({
                model: backend.asked,
                message: { role: "assistant", content: contentOf(own.json) },
                done: true,
                done_reason: "length",
                prompt_eval_count: usage.prompt_tokens,
                eval_count: usage.completion_tokens
            });
            expect(contentOf(own.json)).not.toBe("");
            const generated = await viaA("/api/generate", { model: backend.asked, prompt: messages[0]!.content, options, stream: false });
            expect(generated.status).toBe(200);
            expect(generated.json).toMatchObject({
                model: backend.asked,
                response: contentOf(own.json),
                prompt_eval_count: usage.prompt_tokens
            });
        },
        TIMEOUT_MS
    );

    it(
        "the official ollama client streams a chat on a backend: the backend's greedy text in NDJSON parts, then the counts",
        async () => {
            const messages = [{ role: "user", content: "What is a KV cache?" }];
            const own = await direct(kv, "/chat/completions", { messages, temperature: 0, max_tokens: 10 });
            let text = "";
            let last: { done: boolean; eval_count: number; model: string } | undefined;
            for await (const part of await ollama.chat({
                model: kv.asked,
                messages,
                options: { temperature: 0, num_predict: 10 },
                stream: true
            })) {
                text += part.message.content;
                last = part;
            }
            expect(text).toBe(contentOf(own.json));
            expect(last).toMatchObject({ done: true, eval_count: 10, model: kv.asked });
        },
        TIMEOUT_MS
    );

    it("an Ollama request's workspace (X-Kvault-Workspace) reaches the backend as its `user`", async () => {
        const response = await fetch(`${urlA}/api/chat`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${KEY_A}`, "x-kvault-workspace": "gateway-notes" },
            body: JSON.stringify({
                model: kv.asked,
                messages: [{ role: "user", content: "Hi" }],
                options: { num_predict: 2 },
                stream: false
            })
        });
        expect(response.status).toBe(200);
        // Kvault B's request log (stderr in headless mode) names the workspace its API was asked for
        await until(() => kvaultB.stderr().includes('POST /v1/chat/completions workspace="gateway-notes"'), "B's log line");
    });

    it.each([
        ["ls", ls],
        ["kv", kv]
    ])(
        "Ollama's raw /api/generate for %s goes through the backend's /v1/completions, streamed and not",
        async (_name, backend) => {
            const prompt = PROMPT;
            const own = await direct(backend, "/completions", { prompt, temperature: 0, max_tokens: 8 });
            expect(own.status).toBe(200);
            const options = { temperature: 0, num_predict: 8 };
            const whole = await viaA("/api/generate", { model: backend.asked, prompt, raw: true, options, stream: false });
            expect(whole.status).toBe(200);
            expect(whole.json).toMatchObject({ response: textOf(own.json), done_reason: "length", eval_count: 8 });
            let text = "";
            for await (const part of await ollama.generate({ model: backend.asked, prompt, raw: true, options, stream: true })) {
                text += part.response;
            }
            expect(text).toBe(textOf(own.json));
        },
        TIMEOUT_MS
    );

    it.each([
        ["le", le],
        ["kv", kv]
    ])(
        "Ollama's /api/embed for %s: the backend's own vectors",
        async (_name, backend) => {
            const input = ["A page of KV.", "Another workspace."];
            const own = await direct(backend, "/embeddings", { input });
            const embedded = await ollama.embed({ model: backend.asked, input });
            expect(embedded.model).toBe(backend.asked);
            expect(embedded.embeddings).toEqual(vectorsOf(own.json));
            // one input alone, on both paths: a batch of one is not always bit for bit a batch of two
            const ownOne = await direct(backend, "/embeddings", { input: input[0] });
            const legacy = await viaA("/api/embeddings", { model: backend.asked, prompt: input[0] });
            expect(legacy.status).toBe(200);
            expect(legacy.json.embedding).toEqual(vectorsOf(ownOne.json)[0]);
        },
        TIMEOUT_MS
    );

    it("llama-server's own 500 (its parser refusing random-weight bytes) is the gateway's 502 with its words, on both APIs", async () => {
        const body = { prompt: "Once upon a time", temperature: 0, max_tokens: 8 };
        const own = await direct(ls, "/completions", body);
        expect(own.status).toBe(500);
        const forwarded = await viaA("/v1/completions", { ...body, model: ls.asked });
        expect(forwarded.status).toBe(502);
        expect((forwarded.json.error as { message: string }).message).toMatch(
            /^Backend "ls" answered 500 to POST .*\/v1\/completions: The model produced output that does not match/
        );
        const raw = await viaA("/api/generate", {
            model: ls.asked,
            prompt: body.prompt,
            raw: true,
            options: { temperature: 0, num_predict: 8 },
            stream: false
        });
        // streamed upstream (as every turn on a backend is): its error event, or its 500, with the parser's words
        expect(raw.status).toBe(502);
        expect(raw.json.error).toMatch(/^Backend "ls" .*does not match the expected/);
    });

    it("what is refused over a backend says so: format, num_ctx over the window it states, template", async () => {
        const messages = [{ role: "user", content: "Hi" }];
        const format = await viaA("/api/chat", { model: kv.asked, messages, format: "json", stream: false });
        expect(format.status).toBe(400);
        expect(format.json.error).toMatch(/^format is not sent to backend "kv" over Ollama's API/);
        const numCtx = await viaA("/api/chat", { model: kv.asked, messages, options: { num_ctx: 4096 }, stream: false });
        expect(numCtx.status).toBe(400);
        expect(numCtx.json.error).toBe(
            'options.num_ctx is 4,096 tokens; backend "kv" states a window of 512 for "tiny" (/v1/models max_model_len). Ask for at most that.'
        );
        const template = await viaA("/api/generate", { model: ls.asked, prompt: "Hi", template: "{{ .Prompt }}" });
        expect(template.status).toBe(400);
        const system = await viaA("/api/generate", { model: ls.asked, prompt: "Hi", raw: true, system: "Be brief." });
        expect(system.status).toBe(400);
        expect(system.json.error).toMatch(/raw: true leaves out/);
    });
});
