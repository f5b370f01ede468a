import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEngine } from "../../../engine/process/localEngine.js";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { formatRequestLine, RequestLog, type RequestLogEntry } from "../../../host/http/RequestLog.js";
import { hostMethods } from "../../../host/rpc/hostMethods.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import {
    listenApiServer,
    startInProcessApiServer,
    type InProcessApiServer,
    type ListeningApiServer
} from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";
const SECRET = "my secret question about zebras";

describe("the API's request log", () => {
    let api: InProcessApiServer;
    let verboseServer: ListeningApiServer;
    const quiet = new RequestLog({ logPrompts: false });
    const verbose = new RequestLog({ logPrompts: true });
    const lines: string[] = [];
    let client: OpenAI;
    let verboseClient: OpenAI;

    /** The log's entries once the request's answer has been logged (the line is written when the connection's answer is done). */
    async function settled(log: RequestLog, count: number): Promise<readonly RequestLogEntry[]> {
        for (let attempt = 0; attempt < 200 && log.recent().length < count; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return log.recent();
    }

    beforeAll(async () => {
        quiet.subscribe((entry) => lines.push(formatRequestLine(entry)));
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: { requestLog: quiet, requestTimeoutMs: httpDefaults.requestTimeoutMs }
        });
        verboseServer = await listenApiServer(api.service, {
            apiKey: API_KEY,
            server: { requestLog: verbose, requestTimeoutMs: httpDefaults.requestTimeoutMs }
        });
        client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
        verboseClient = new OpenAI({ baseURL: `${verboseServer.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    });
    afterAll(async () => {
        await verboseServer?.server.close();
        await api?.close();
    });

    it("logs one line per request, with its workspace, tokens, outcome and time, and never its prompt", async () => {
        const answer = await client.chat.completions.create({
            model: "tiny",
            messages: [{ role: "user", content: SECRET }],
            max_tokens: 3,
            temperature: 0,
            user: "notes"
        });
        const embedded = await client.embeddings.create({ model: "tiny", input: ["a", "b"] });
        await expect(
            client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: SECRET }], n: 2 })
        ).rejects.toThrow();

        const [chat, embed, refused] = await settled(quiet, 3);
        expect(chat).toMatchObject({
            endpoint: "POST /v1/chat/completions",
            workspace: "notes",
            promptTokens: answer.usage!.prompt_tokens,
            completionTokens: answer.usage!.completion_tokens,
            status: 200,
            outcome: "ok"
        });
        expect(chat!.ms).toBeGreaterThanOrEqual(0);
        expect(Date.parse(chat!.time)).not.toBeNaN();
        expect(chat!.prompt).toBeUndefined();
        expect(embed).toMatchObject({
            endpoint: "POST /v1/embeddings",
            workspace: null,
            promptTokens: embedded.usage.prompt_tokens,
            status: 200
        });
        expect(refused).toMatchObject({ endpoint: "POST /v1/chat/completions", status: 400, outcome: "invalid_request_error" });

        // the embed call is counted with the engine's requests
        const metrics = await (
            await fetch(`${client.baseURL.replace(/\/v1$/, "")}/metrics`, { headers: { Authorization: `Bearer ${API_KEY}` } })
        ).text();
        expect(metrics).toContain('kvault_requests_total{outcome="embedded"} 1');
        expect(metrics).toContain('kvault_requests_total{outcome="embed_failed"} 0');

        expect(lines).toHaveLength(3);
        expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z POST \/v1\/chat\/completions workspace="notes" tokens=\d+\/3 200 ok \d+ ms$/);
        for (const line of lines) {
            expect(line).not.toContain("zebras");
        }
    });

    it("shows the prompt only when prompts are logged, and answers the RPC's requestLog", async () => {
        await verboseClient.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: SECRET }], max_tokens: 2 });
        const [entry] = await settled(verbose, 1);
        expect(entry!.prompt).toBe(SECRET);
        expect(formatRequestLine(entry!)).toContain(`prompt="${SECRET}"`);

        const methods = hostMethods({
            engine: async () => localEngine(api.service),
            models: () => Promise.reject(new Error("no models here")),
            requestLog: () => quiet
        });
        const context = { callerId: 1, callerGone: new AbortController().signal } as Parameters<typeof methods.requestLog>[1];
        const last = await methods.requestLog({ limit: 1 }, context);
        expect(last).toHaveLength(1);
        expect(last[0]!.endpoint).toBe("POST /v1/chat/completions");
        expect(
            await hostMethods({ engine: async () => localEngine(api.service), models: () => Promise.reject(new Error("none")) }).requestLog(
                {},
                context
            )
        ).toEqual([]);
    });
});
