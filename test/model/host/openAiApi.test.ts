import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcLimits } from "../../../contract/limits.js";
import type { EngineService } from "../../../engine/service/EngineService.js";
import { startTinyApiServer, type TinyApiServer } from "./tinyApiServer.js";

const API_KEY = "test-key-0123456789";

function metricValue(text: string, name: string): number {
    const line = text.split("\n").find((candidate) => candidate.startsWith(name + " "));
    expect(line, name).toBeDefined();
    return Number(line!.slice(name.length + 1));
}

describe("the OpenAI-compatible API, driven by the official openai client", () => {
    let service: EngineService;
    let url: string;
    let client: OpenAI;
    const raw = (pathname: string, init: RequestInit = {}): Promise<Response> =>
        fetch(url + pathname, {
            ...init,
            headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json", ...init.headers }
        });

    let api: TinyApiServer;

    beforeAll(async () => {
        api = await startTinyApiServer(API_KEY, { tokenDelayMs: 5 }); // paced, so the abort test's cancel lands mid-answer
        ({ service, url, client } = api);
    });
    afterAll(async () => {
        await api?.close();
    });

    it("lists the model", async () => {
        const models = await client.models.list();
        expect(models.data.map((model) => model.id)).toEqual(["tiny"]);
    });

    it("answers in full, streamed and not, with the same greedy text and usage", async () => {
        const messages = [{ role: "user" as const, content: "Tell me about pages." }];
        const whole = await client.chat.completions.create({ model: "tiny", messages, max_tokens: 8, temperature: 0 });
        expect(whole.object).toBe("chat.completion");
        expect(whole.choices[0]!.finish_reason).toBe("length");
        expect(whole.usage).toMatchObject({ completion_tokens: 8 });
        expect(whole.usage!.prompt_tokens).toBeGreaterThan(5);

        const stream = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_completion_tokens: 8,
            temperature: 0,
            stream: true,
            stream_options: { include_usage: true }
        });
        let text = "";
        let finishReason: string | null = null;
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) {
            text += chunk.choices[0]?.delta.content ?? "";
            finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
            usage = chunk.usage ?? usage;
        }
        expect(text).toBe(whole.choices[0]!.message.content);
        expect(finishReason).toBe("length");
        expect(usage).toMatchObject({ completion_tokens: 8, prompt_tokens: whole.usage!.prompt_tokens });
    });

    it("reports logprobs and top_logprobs, streamed and not; greedy picks the most likely token", async () => {
        const messages = [{ role: "user" as const, content: "Tell me about logprobs." }];
        const whole = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 5,
            temperature: 0,
            logprobs: true,
            top_logprobs: 3
        });
        const content = whole.choices[0]!.logprobs!.content!;
        expect(content).toHaveLength(5);
        for (const entry of content) {
            expect(entry.logprob).toBeLessThanOrEqual(0);
            expect(entry.top_logprobs).toHaveLength(3);
            expect(entry.top_logprobs[0]!.logprob).toBeCloseTo(entry.logprob, 6); // temperature 0: the argmax
            expect(entry.top_logprobs[1]!.logprob).toBeLessThanOrEqual(entry.top_logprobs[0]!.logprob);
            expect(entry.bytes!.length).toBeGreaterThan(0);
        }
        const plain = await client.chat.completions.create({ model: "tiny", messages, max_tokens: 5, temperature: 0 });
        expect(plain.choices[0]!.logprobs).toBeNull();

        const stream = await client.chat.completions.create({
            model: "tiny",
            messages,
            max_tokens: 5,
            temperature: 0,
            logprobs: true,
            stream: true
        });
        const streamed: number[] = [];
        for await (const chunk of stream) {
            streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []).map((entry) => entry.logprob));
        }
        expect(streamed).toEqual(content.map((entry) => entry.logprob));

        const refused = await raw("/v1/chat/completions", {
            method: "POST",
            body: JSON.stringify({ model: "tiny", messages, top_logprobs: 2 })
        });
        expect(refused.status).toBe(400);
        expect(await refused.json()).toMatchObject({ error: { param: "top_logprobs" } });
    });

    it("takes llama.cpp's XTC (xtc_probability, xtc_threshold) through the turn to the sampler, and refuses one out of range", async () => {
        const request = (extra: Record<string, unknown>): Promise<Response> =>
            raw("/v1/chat/completions", {
                method: "POST",
                body: JSON.stringify({
                    model: "tiny",
                    messages: [{ role: "user", content: "Tell me about pages." }],
                    max_tokens: 8,
                    temperature: 1,
                    seed: 7,
                    ...extra
                })
            });
        const answer = async (extra: Record<string, unknown>): Promise<string> => {
            const response = await request(extra);
            expect(response.status).toBe(200);
            return ((await response.json()) as OpenAI.ChatCompletion).choices[0]!.message.content!;
        };
        const plain = await answer({});
        expect(await answer({})).toBe(plain); // the seed makes a sampled answer repeatable
        expect(await answer({ xtc_probability: 0 })).toBe(plain); // 0 is off
        // every token is above a threshold of 0, so each step keeps only the least likely: another answer
        expect(await answer({ xtc_probability: 1, xtc_threshold: 0 })).not.toBe(plain);
        const refused = await request({ xtc_probability: 1.5 });
        expect(refused.status).toBe(400);
        expect(JSON.stringify(await refused.json())).toMatch(/xtc_probability/);
    });

    it("keeps a named workspace's KV between requests (user field or X-Kvault-Workspace) and none for anonymous ones", async () => {
        const first = await client.chat.completions.create({
            model: "tiny",
            messages: [{ role: "user", content: "Remember the word lantern." }],
            max_tokens: 4,
            temperature: 0,
            user: "alice"
        });
        const second = await client.chat.completions.create({
            model: "tiny",
            max_tokens: 4,
            temperature: 0,
            user: "alice",
            messages: [
                { role: "user", content: "Remember the word lantern." },
                { role: "assistant", content: first.choices[0]!.message.content! },
                { role: "user", content: "Which word?" }
            ]
        });
        expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(0);
        const anonymous = await client.chat.completions.create({
            model: "tiny",
            messages: [{ role: "user", content: "Remember the word lantern." }],
            max_tokens: 4,
            temperature: 0
        });
        expect(anonymous.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
        expect(service.engine.workspaces().some((session) => session.id.startsWith("api-request:"))).toBe(false);
    });

    it("refuses a prompt that does not fit with 400 context_length_exceeded and the numbers", async () => {
        const error = await client.chat.completions
            .create({ model: "tiny", messages: [{ role: "user", content: "pages ".repeat(400) }], max_tokens: 8 })
            .then(
                () => undefined,
                (caught: unknown) => caught
            );
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("context_length_exceeded");
        expect((error as Error).message).toMatch(/needs [\d,]+ tokens .* the limit is 256/);
    });

    it("cancels the generation when the client aborts, and the metrics show the pages back", async () => {
        const before = await (await raw("/metrics")).text();
        const controller = new AbortController();
        const stream = await client.chat.completions.create(
            {
                model: "tiny",
                messages: [{ role: "user", content: "Write at length about leases and quarantine, please." }],
                max_tokens: 200,
                temperature: 0,
                stream: true
            },
            { signal: controller.signal }
        );
        let numChunks = 0;
        try {
            for await (const chunk of stream) {
                void chunk;
                if (++numChunks === 3) {
                    controller.abort();
                }
            }
        } catch (error) {
            expect((error as Error).name).toMatch(/Abort/); // depending on timing the client ends quietly or with an abort error
        }
        expect(numChunks).toBeGreaterThanOrEqual(3);
        expect(numChunks).toBeLessThan(50);
        let after = "";
        for (let attempt = 0; attempt < 50; attempt++) {
            // the cancel reaches the engine within a decode step
            after = await (await raw("/metrics")).text();
            if (
                metricValue(after, 'kvault_requests_total{outcome="cancelled"}') >
                metricValue(before, 'kvault_requests_total{outcome="cancelled"}')
            ) {
                break;
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(metricValue(after, 'kvault_requests_total{outcome="cancelled"}')).toBe(
            metricValue(before, 'kvault_requests_total{outcome="cancelled"}') + 1
        );
        expect(metricValue(after, 'kvault_pages{state="free"}')).toBe(48);
        expect(metricValue(after, "kvault_page_leases_active")).toBe(0);
        // A cancel is not a stale completion: the transfer counters say nothing arrived late.
        expect(metricValue(after, "kvault_stale_completions_ignored_total")).toBe(0);
        expect(metricValue(after, "kvault_stale_writes_refused_total")).toBe(0);
    });

    it("answers errors in OpenAI's shape: 401, 404, 400 for bad JSON and bad values, 413 for a huge body", async () => {
        const noKey = await fetch(`${url}/v1/models`);
        expect(noKey.status).toBe(401);
        expect(await noKey.json()).toMatchObject({ error: { type: "authentication_error", code: "invalid_api_key", param: null } });
        const wrongKey = await fetch(`${url}/v1/models`, { headers: { Authorization: "Bearer nope-nope-nope" } });
        expect(wrongKey.status).toBe(401);

        const unknownModel = await raw("/v1/chat/completions", {
            method: "POST",
            body: JSON.stringify({ model: "gpt-9", messages: [{ role: "user", content: "hi" }] })
        });
        expect(unknownModel.status).toBe(404);
        expect(await unknownModel.json()).toMatchObject({ error: { code: "model_not_found", param: "model" } });

        const badJson = await raw("/v1/chat/completions", { method: "POST", body: "{not json" });
        expect(badJson.status).toBe(400);
        expect(await badJson.json()).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_json" } });

        const badValue = await raw("/v1/chat/completions", {
            method: "POST",
            body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "hi" }], temperature: 5 })
        });
        expect(badValue.status).toBe(400);
        expect(await badValue.json()).toMatchObject({ error: { type: "invalid_request_error", param: "temperature" } });

        const twoChoices = await raw("/v1/chat/completions", {
            method: "POST",
            body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "hi" }], n: 2 })
        });
        expect(twoChoices.status).toBe(400);

        const huge = await raw("/v1/chat/completions", {
            method: "POST",
            // The API's body limit is the RPC's one limit on a message (contract/limits.ts).
            body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "x".repeat(rpcLimits.maxMessageBytes) }] })
        });
        expect(huge.status).toBe(413);
        expect(await huge.json()).toMatchObject({ error: { code: "request_too_large" } });
    });

    it("refuses another Host (DNS rebinding) and other origins, and grants no CORS", async () => {
        const rebinding = await new Promise<number>((resolve, reject) => {
            import("node:http").then(({ request }) => {
                const target = new URL(url);
                const req = request(
                    { host: target.hostname, port: target.port, path: "/health", headers: { Host: "evil.example:80" } },
                    (res) => {
                        res.resume();
                        resolve(res.statusCode!);
                    }
                );
                req.on("error", reject);
                req.end();
            }, reject);
        });
        expect(rebinding).toBe(403);
        const otherOrigin = await raw("/v1/models", { headers: { Origin: "http://evil.example" } });
        expect(otherOrigin.status).toBe(403);
        expect(otherOrigin.headers.get("access-control-allow-origin")).toBeNull();
        const preflight = await fetch(`${url}/v1/chat/completions`, {
            method: "OPTIONS",
            headers: { Origin: "http://evil.example", "Access-Control-Request-Method": "POST" }
        });
        expect(preflight.status).toBe(403);
        expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
        expect((await fetch(`${url}/health`)).status).toBe(200);
    });

    it("survives fuzzed payloads: never a 5xx, never wedged", async () => {
        const payloads: string[] = [
            "null",
            "[]",
            "42",
            '"text"',
            "{}",
            JSON.stringify({ model: 7 }),
            JSON.stringify({ model: "tiny", messages: "hi" }),
            JSON.stringify({ model: "tiny", messages: [null] }),
            JSON.stringify({ model: "tiny", messages: [{ role: "user", content: { nested: [1, 2, { deep: true }] } }] }),
            JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "hi" }], max_tokens: -5 }),
            JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "hi" }], max_tokens: "10" }),
            JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "hi" }], stop: [1, 2] }),
            JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "hi" }], user: "u".repeat(10_000) }),
            JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "hi" }], seed: 1.5, unknown_field: { a: 1 } }),
            JSON.stringify({ model: "tiny", messages: [{ role: "system", content: "only a system message" }] }),
            '{"model": "tiny", "messages": [{"role": "user", "content": "\\ud800"}]}'
        ];
        for (let seed = 0; seed < 20; seed++) {
            payloads.push(Buffer.from(Array.from({ length: 64 }, (_, i) => (seed * 131 + i * 17) % 256)).toString("latin1"));
        }
        for (const body of payloads) {
            const response = await raw("/v1/chat/completions", { method: "POST", body });
            expect(response.status, body.slice(0, 80)).toBeLessThan(500);
            const json = (await response.json()) as { error?: { message?: string } };
            if (response.status !== 200) {
                expect(typeof json.error?.message).toBe("string");
            }
        }
        const healthy = await client.chat.completions.create({
            model: "tiny",
            messages: [{ role: "user", content: "still there?" }],
            max_tokens: 3,
            temperature: 0
        });
        expect(healthy.choices[0]!.message.content!.length).toBeGreaterThan(0);
    });
});
