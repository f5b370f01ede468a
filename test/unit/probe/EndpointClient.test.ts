import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverEndpoint, ProbeCannotRunError } from "../../../probe/discoverEndpoint.js";
import { EndpointClient } from "../../../probe/EndpointClient.js";
import { MAX_ANSWER_BYTES } from "../../../probe/readAnswerText.js";
import { closeServer, listenOnLoopback, pour, type PourCount } from "../../support/misbehavingBackend.js";

// The probe's client against a server that never ends its answers, over real HTTP on loopback:
// every answer is read through one bounded reader, so an endless body ends the exchange with the
// bytes read and the cap (or the time limit), as a value the probe reports, never a probe that grows.
const POUR_LIMIT_BYTES = 64 * 1024 * 1024;

let count: PourCount;
let server: http.Server;
let url: string;
/** What the server does after the headers: pours an endless JSON list, or trickles a byte at a time. */
let answer: "pour" | "trickle" = "pour";

beforeAll(async () => {
    server = http.createServer((request, response) => {
        request.resume();
        response.writeHead(200, { "content-type": "application/json" });
        if (answer === "pour") {
            response.write('{"object":"list","data":[');
            void pour(response, '{"id":"m","object":"model"},'.repeat(1024), POUR_LIMIT_BYTES, count);
            return;
        }
        response.write(" "); // the headers go at once; the body never ends
        const timer = setInterval(() => response.write(" "), 20);
        response.on("close", () => clearInterval(timer));
    });
    url = await listenOnLoopback(server);
});

afterAll(() => closeServer(server));

const client = (options: { timeoutMs?: number; maxAnswerBytes?: number } = {}): EndpointClient =>
    new EndpointClient({ baseUrl: url, model: "m", kind: "chat", timeoutMs: options.timeoutMs ?? 30_000, ...options });

describe("the probe's client reads every answer bounded", () => {
    it(`stops an endless /v1/models at ${MAX_ANSWER_BYTES.toLocaleString("en-US")} bytes and says so; discovery cannot run`, async () => {
        answer = "pour";
        count = { numBytesSent: 0, waiting: false, pouredAll: false };
        const listed = await client().getJson("/v1/models", undefined);
        expect(listed.status).toBe(200);
        expect(listed.body).toBeUndefined();
        expect(listed.failure).toMatch(
            /^http:\/\/127\.0\.0\.1:\d+\/v1\/models sent an answer of more than 16,777,216 bytes \([\d,]+ read\); the probe reads no more of one answer and stopped there$/
        );
        expect(count.pouredAll).toBe(false);

        count = { numBytesSent: 0, waiting: false, pouredAll: false };
        const error = await discoverEndpoint(client(), { a: undefined, b: undefined }, undefined).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProbeCannotRunError);
        expect((error as Error).message).toMatch(
            /\/v1\/models answered 200, but the answer could not be read: .* more than 16,777,216 bytes/
        );
    }, 60_000);

    it("ends a completion over the cap as no answer, with the bytes read and the cap", async () => {
        answer = "pour";
        count = { numBytesSent: 0, waiting: false, pouredAll: false };
        const exchange = await client({ maxAnswerBytes: 1024 * 1024 }).complete({ key: undefined, user: "u", prompt: "Hi", maxTokens: 1 });
        expect(exchange).toMatchObject({ status: 0, text: "" });
        expect(exchange.failure).toMatch(/\/v1\/chat\/completions sent an answer of more than 1,048,576 bytes \([\d,]+ read\)/);
        expect(count.pouredAll).toBe(false);
    }, 60_000);

    it("ends an answer that trickles on past the request's time limit, the body included", async () => {
        answer = "trickle";
        const listed = await client({ timeoutMs: 1_000 }).getJson("/v1/models", undefined);
        expect(listed).toEqual({ status: 200, body: undefined, failure: "no whole answer within 1 s" });
    }, 30_000);
});
