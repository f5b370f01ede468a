import http from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeOrigin } from "../../../host/http/corsPolicy.js";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import {
    listenApiServer,
    startInProcessApiServer,
    type InProcessApiServer,
    type ListeningApiServer
} from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";
const GRANTED = "http://app.example:5173";

interface Answer {
    readonly status: number;
    readonly headers: http.IncomingHttpHeaders;
    readonly body: string;
}

/** A request as a browser would send it (Origin set), over real HTTP. */
function send(url: string, method: string, pathname: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
        const request = http.request(new URL(pathname, url), { method, headers }, (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => (text += chunk));
            response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
        });
        request.on("error", reject);
        request.end(body);
    });
}

describe("CORS as an allow-list, and X-Api-Key", () => {
    let api: InProcessApiServer;
    let closed: ListeningApiServer;
    let url: string;
    let closedUrl: string;

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: { corsOrigins: [GRANTED], requestTimeoutMs: httpDefaults.requestTimeoutMs }
        });
        closed = await listenApiServer(api.service, { apiKey: API_KEY, server: { requestTimeoutMs: httpDefaults.requestTimeoutMs } });
        url = api.url;
        closedUrl = closed.url;
    });
    afterAll(async () => {
        await closed?.server.close();
        await api?.close();
    });

    it("answers a granted origin's preflight and requests, and refuses every other origin", async () => {
        const preflight = await send(url, "OPTIONS", "/v1/chat/completions", {
            Origin: GRANTED,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"
        });
        expect(preflight.status).toBe(204);
        expect(preflight.headers["access-control-allow-origin"]).toBe(GRANTED);
        expect(preflight.headers["access-control-allow-methods"]).toContain("POST");
        expect(preflight.headers["access-control-allow-headers"]).toMatch(/Authorization/);

        const models = await send(url, "GET", "/v1/models", { Origin: GRANTED, Authorization: `Bearer ${API_KEY}` });
        expect(models.status).toBe(200);
        expect(models.headers["access-control-allow-origin"]).toBe(GRANTED);
        expect(models.headers.vary).toBe("Origin");

        // another origin, the granted one outside the API, and any origin on a server without the option: refused as before
        const other = await send(url, "OPTIONS", "/v1/models", { Origin: "http://evil.example" });
        expect(other.status).toBe(403);
        expect(other.headers["access-control-allow-origin"]).toBeUndefined();
        expect((await send(url, "GET", "/v1/models", { Origin: "http://evil.example", Authorization: `Bearer ${API_KEY}` })).status).toBe(
            403
        );
        expect((await send(url, "GET", "/metrics", { Origin: GRANTED, Authorization: `Bearer ${API_KEY}` })).status).toBe(403);
        const closed = await send(closedUrl, "OPTIONS", "/v1/models", { Origin: GRANTED });
        expect(closed.status).toBe(403);
        expect(JSON.parse(closed.body)).toMatchObject({ error: { code: "origin_not_allowed" } });
    });

    it("takes the key as X-Api-Key as it takes Bearer", async () => {
        expect((await send(url, "GET", "/v1/models", { "X-Api-Key": API_KEY })).status).toBe(200);
        expect((await send(url, "GET", "/v1/models", { "X-Api-Key": "not-the-key-000" })).status).toBe(401);
        const client = new OpenAI({
            baseURL: `${url}/v1`,
            apiKey: "unused",
            defaultHeaders: { Authorization: null, "X-Api-Key": API_KEY },
            maxRetries: 0
        });
        expect((await client.models.list()).data.map((model) => model.id)).toEqual(["tiny"]);
    });

    it("reads --cors-origin values as origins only", () => {
        expect(normalizeOrigin("http://App.Example:5173/")).toBe("http://app.example:5173");
        expect(normalizeOrigin("https://a.example")).toBe("https://a.example");
        expect(normalizeOrigin("http://a.example/path")).toBeUndefined();
        expect(normalizeOrigin("file:///x")).toBeUndefined();
        expect(normalizeOrigin("*")).toBeUndefined();
    });
});
