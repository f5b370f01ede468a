import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_OPEN_GRAMMAR_ALTERNATIVES, measureGrammarAmbiguity } from "../../../contract/rpc/grammarAmbiguity.js";
import { ambiguousSchema } from "../../support/ambiguousSchema.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "test-key-0123456789";

function headers(workspace: string): Record<string, string> {
    return { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json", "X-Kvault-Workspace": workspace };
}

/** A streamed answer's content events as they come, counted; `ended` once its body is done. */
interface CountedStream {
    readonly numChunks: () => number;
    readonly ended: () => boolean;
    readonly done: Promise<void>;
}

function countChunks(response: Response): CountedStream {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let numChunks = 0;
    let ended = false;
    const done = (async (): Promise<void> => {
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
            numChunks += decoder
                .decode(read.value, { stream: true })
                .split("\n\n")
                .filter((event) => event.includes('"content"')).length;
        }
        ended = true;
    })().catch(() => undefined);
    return { numChunks: () => numChunks, ended: () => ended, done };
}

/** Waits (a bounded number of short sleeps) until `stream` has `atLeast` chunks; returns how many it has. */
async function chunksReach(stream: CountedStream, atLeast: number): Promise<number> {
    for (let attempt = 0; attempt < 1_500 && stream.numChunks() < atLeast && !stream.ended(); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return stream.numChunks();
}

describe("a schema of alike alternatives neither stalls nor outlives its turn", () => {
    let api: InProcessApiServer;
    let url: string;

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), gpu: false, window: 4096 },
            server: { requestTimeoutMs: 120_000 }
        });
        url = api.url;
    });
    afterAll(async () => {
        await api?.close();
    });

    it("refuses the issue's schema with the counts (OpenAI and Ollama), and serves the worst one allowed, cancelled, while another workspace streams on", async () => {
        const streaming = new AbortController();
        const response = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: headers("streaming"),
            body: JSON.stringify({
                model: "tiny",
                messages: [{ role: "user", content: "Tell me a long story about pages." }],
                max_tokens: 3_000,
                temperature: 0,
                stream: true
            }),
            signal: streaming.signal
        });
        expect(response.status).toBe(200);
        const stream = countChunks(response);
        expect(await chunksReach(stream, 4)).toBeGreaterThanOrEqual(4);

        // the schema: six levels of eight alike arrays, as response_format and as Ollama's format with an extra key
        const refused = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: headers("schema"),
            body: JSON.stringify({
                model: "tiny",
                messages: [{ role: "user", content: "Nested lists, please." }],
                max_tokens: 64,
                response_format: { type: "json_schema", json_schema: { name: "nested", schema: ambiguousSchema() } }
            })
        });
        expect(refused.status).toBe(400);
        const { error } = (await refused.json()) as { error: { code: string; message: string; param: string } };
        expect(error.code).toBe("ambiguous_schema");
        expect(error.param).toBe("response_format.json_schema.schema.$defs.L2");
        expect(error.message).toContain("keeps about 256 parse stacks open at once");
        expect(error.message).toContain("1,048,576 in the whole schema");
        expect(error.message).toContain(`the ${MAX_OPEN_GRAMMAR_ALTERNATIVES} Kvault allows`);
        const ollama = await fetch(`${url}/api/chat`, {
            method: "POST",
            headers: headers("schema"),
            body: JSON.stringify({
                model: "tiny",
                messages: [{ role: "user", content: "Nested lists, please." }],
                format: { ...ambiguousSchema(), title: "nested" },
                stream: false
            })
        });
        expect(ollama.status).toBe(400);
        expect(((await ollama.json()) as { error: string }).error).toContain("256 parse stacks");

        // the worst schema of this shape that is served: one level of alike arrays, about 4 stacks each, at the limit through a long string
        const worst = ambiguousSchema(1, MAX_OPEN_GRAMMAR_ALTERNATIVES / 4, { type: "string", minLength: 400 }, 1);
        expect(measureGrammarAmbiguity(worst).numOpen).toBe(MAX_OPEN_GRAMMAR_ALTERNATIVES);
        const cancelled = new AbortController();
        const chunksBeforeWorst = stream.numChunks();
        const worstResponse = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: headers("schema"),
            body: JSON.stringify({
                model: "tiny",
                messages: [{ role: "user", content: "Nested lists, please." }],
                max_tokens: 2_000,
                temperature: 0,
                stream: true,
                response_format: { type: "json_schema", json_schema: { name: "nested", schema: worst } }
            }),
            signal: cancelled.signal
        });
        expect(worstResponse.status).toBe(200);
        const worstStream = countChunks(worstResponse);
        expect(await chunksReach(worstStream, 8)).toBeGreaterThanOrEqual(8);
        expect(worstStream.ended(), "the schema's answer was still going when cancelled").toBe(false);
        const chunksBesideWorst = stream.numChunks() - chunksBeforeWorst;
        cancelled.abort();
        await worstStream.done;
        const chunksAtCancel = stream.numChunks();
        const chunksAfterCancel = (await chunksReach(stream, chunksAtCancel + 8)) - chunksAtCancel;

        expect(stream.ended(), "the other workspace's answer was still going").toBe(false);
        // one step samples both answers, so the other gets about as many chunks as the schema's
        expect(chunksBesideWorst, "chunks the other workspace got while the schema's turn ran").toBeGreaterThanOrEqual(4);
        expect(chunksAfterCancel, "chunks the other workspace got after the schema's turn was cancelled").toBeGreaterThanOrEqual(8);

        streaming.abort();
        await stream.done;
        // the cancelled turn's workspace is served again
        const after = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: headers("schema"),
            body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "Short now." }], max_tokens: 4, temperature: 0 })
        });
        expect(after.status).toBe(200);
    });

    it("serves an enum of 4,056 three-letter codes (counted 26 open, as the engine's trie of them keeps), answering one of them", async () => {
        const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        const codes = [...letters].flatMap((first) =>
            [...letters].flatMap((second) => [..."ABCDEF"].map((third) => first + second + third))
        );
        const schema = {
            type: "object",
            properties: { currency: { enum: codes }, note: { type: "string", maxLength: 12 } },
            required: ["currency", "note"],
            additionalProperties: false
        };
        expect(measureGrammarAmbiguity(schema).numOpen).toBe(26);
        for (const temperature of [0, 1]) {
            const response = await fetch(`${url}/v1/chat/completions`, {
                method: "POST",
                headers: headers("codes"),
                body: JSON.stringify({
                    model: "tiny",
                    messages: [{ role: "user", content: "A price, please." }],
                    max_tokens: 48,
                    temperature,
                    seed: 7,
                    response_format: { type: "json_schema", json_schema: { name: "price", schema } }
                })
            });
            const body = (await response.json()) as {
                choices?: { message: { content: string }; finish_reason: string }[];
                error?: unknown;
            };
            expect(response.status, JSON.stringify(body.error)).toBe(200);
            const answer = JSON.parse(body.choices![0]!.message.content) as { currency: string; note: string };
            expect(codes).toContain(answer.currency);
            expect(answer.note.length).toBeLessThanOrEqual(12);
        }
    });
});
