import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineService } from "../../../engine/service/EngineService.js";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { listenApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "limits-test-key";

describe("the API's limits: a full queue and the per-request time limit", () => {
    let service: EngineService;
    beforeAll(async () => {
        // Every turn's handoff (inPlacePrefillTokens 0: every prompt is handed off) waits 150 ms
        // before each of its steps, so a turn takes longer than the 100 ms limit below by
        // construction, never by how fast this machine decodes: the tiny model's 200 tokens alone
        // take less than 100 ms on 2 cores.
        service = await EngineService.start({
            modelPath: generatedModelPath("tiny"),
            ...tinyEngineConfig,
            handoffStepDelayMs: 150,
            gpu: false
        });
    });
    afterAll(async () => {
        await service.dispose();
    });

    async function withServer(
        options: { maxInFlight?: number; requestTimeoutMs?: number },
        body: (url: string) => Promise<void>
    ): Promise<void> {
        const { server, url } = await listenApiServer(service, {
            apiKey: API_KEY,
            server: { requestTimeoutMs: httpDefaults.requestTimeoutMs, ...options }
        });
        try {
            await body(url);
        } finally {
            await server.close();
        }
    }

    const post = (url: string, maxTokens: number): Promise<Response> =>
        fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
            body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "go on" }], max_tokens: maxTokens, temperature: 0 })
        });

    it("answers 429 with Retry-After when the queue is full, and serves again after", async () => {
        await withServer({ maxInFlight: 1 }, async (url) => {
            const running = post(url, 150);
            await new Promise((resolve) => setTimeout(resolve, 50));
            const refused = await post(url, 1);
            expect(refused.status).toBe(429);
            expect(refused.headers.get("retry-after")).toBe("1");
            expect(await refused.json()).toMatchObject({ error: { type: "rate_limit_error", code: "queue_full" } });
            expect((await running).status).toBe(200);
            expect((await post(url, 1)).status).toBe(200);
        });
        await expectEngineClean(service.engine);
    });

    it("cancels a request that runs past the time limit and answers 504, never a partial 200", async () => {
        await withServer({ requestTimeoutMs: 100 }, async (url) => {
            const response = await post(url, 200);
            expect(response.status).toBe(504);
            expect(await response.json()).toMatchObject({
                error: { code: "request_timeout", message: expect.stringMatching(/ran longer than the limit/) }
            });
        });
        for (let waited = 0; waited < 10_000 && service.engine.workspaces().some((session) => session.busy); waited += 10) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await expectEngineClean(service.engine);
    });
});
