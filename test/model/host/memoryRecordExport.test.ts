import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MemoryEvent, MemoryEventsPage, MemoryRecordHeader } from "../../../contract/memoryEvents.js";
import type { RpcServerMessage } from "../../../contract/rpc.js";
import { repositoryRoot } from "../../support/generatedModels.js";
import { listening, startServe, stopServe, type ServeProcess } from "../../cli/serveProcess.js";
import { RawClient } from "./rpcHost.js";

// Issue 39, item 3, through `npm run serve`: the audit record on disk holds every memory event of
// the run, ids, sizes, states and checksums alone. A prompt long enough to be handed off carries
// words found nowhere else; the export must not hold them, nor the answer's text.
const API_KEY = "memory-record-key-0001";
const EXTRA_KEY = "memory-record-extra-0001";
const DISTINCTIVE = ["Quetzalpineapplewhisper", "zorblaxian"];
const PROMPT =
    `Remember the secret ${DISTINCTIVE[0]} and the ${DISTINCTIVE[1]} lantern. ` +
    "Pages carry the handoff from the prefill context to the decode context, sealed and verified. ".repeat(16);

function resultOf(reply: RpcServerMessage): unknown {
    if (!("id" in reply) || "error" in reply) {
        throw new Error(`expected a result, got ${JSON.stringify(reply).slice(0, 300)}`);
    }
    return reply.result;
}

describe("the audit record: every memory event of the run, no prompt text, kept across a restart (npm run serve)", () => {
    let scratch: string;
    let dataDir: string;
    let server: ServeProcess | undefined;
    let url: string;
    const args = () => ["--port", "0", "--data-dir", dataDir, "--context", "2048", "--decode-sequences", "2", "--page-tokens", "16"];
    const start = async (): Promise<void> => {
        server = startServe([...args(), "--extra-api-key", `other=${EXTRA_KEY}`], { KVAULT_API_KEY: API_KEY });
        url = await listening(server);
    };
    const exportRecord = async (key = API_KEY): Promise<Response> =>
        fetch(`${url}/v1/kvault/memory-record`, { headers: { Authorization: `Bearer ${key}` } });

    beforeAll(async () => {
        scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-memory-record-"));
        dataDir = path.join(scratch, "data");
        await start();
    });
    afterAll(async () => {
        if (server !== undefined) {
            await stopServe(server);
        }
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it("exports the handoff's events as the engine recorded them, with Kvault's version and the model, and not a word of the prompt", async () => {
        const model = (
            (await (await fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${API_KEY}` } })).json()) as {
                data: { id: string }[];
            }
        ).data[0]!.id;
        const answered = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
            body: JSON.stringify({ model, messages: [{ role: "user", content: PROMPT }], max_tokens: 8, temperature: 0 })
        });
        expect(answered.status).toBe(200);
        const answer = ((await answered.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;

        const client = await RawClient.connect(url, { key: API_KEY });
        let engineEvents: MemoryEvent[];
        try {
            engineEvents = [...(resultOf(await client.call(1, "memoryEvents", { afterSeq: 0 }, 30_000)) as MemoryEventsPage).events];
        } finally {
            client.socket.terminate();
        }

        const response = await exportRecord();
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toContain("application/x-ndjson");
        const text = await response.text();
        const [headerLine, ...eventLines] = text.trimEnd().split("\n");
        const header = JSON.parse(headerLine!) as MemoryRecordHeader;
        const packageVersion = (JSON.parse(fs.readFileSync(path.join(repositoryRoot, "package.json"), "utf8")) as { version: string })
            .version;
        expect(header).toMatchObject({ kind: "kvaultMemoryRecord", kvaultVersion: packageVersion, numEvents: eventLines.length });
        expect(header.model.file).toMatch(/\.gguf$/);
        const exported = eventLines.map((line) => JSON.parse(line) as MemoryEvent);
        // every event the engine recorded up to our call, in order, none left out (the export polls the engine first)
        expect(exported.slice(0, engineEvents.length)).toEqual(engineEvents);
        expect(exported.map((event) => event.seq)).toEqual(exported.map((_, index) => index + 1));
        const kinds = new Set(exported.map((event) => event.kind));
        for (const kind of ["handoffStarted", "reserved", "sealed", "verified", "released", "scrubbed"] as const) {
            expect(kinds).toContain(kind);
        }
        // no word of the prompt, nor of the answer, in the record
        for (const word of [...DISTINCTIVE, "lantern", "Remember", ...answer.split(/\W+/).filter((word) => word.length >= 5)]) {
            expect(text.toLowerCase()).not.toContain(word.toLowerCase());
        }
        for (const file of fs.readdirSync(path.join(dataDir, "memory-record"))) {
            expect(fs.statSync(path.join(dataDir, "memory-record", file)).mode & 0o777).toBe(0o600);
        }

        // every workspace's memory is in it: the default key's alone, as /metrics
        expect((await exportRecord(EXTRA_KEY)).status).toBe(401);
        expect((await fetch(`${url}/v1/kvault/memory-record`)).status).toBe(401);
    });

    it("keeps the earlier run's events after a restart, the new run's after them", async () => {
        const before = (await (await exportRecord()).text()).trimEnd().split("\n").slice(1);
        await stopServe(server!);
        server = undefined;
        await start();
        const after = (await (await exportRecord()).text()).trimEnd().split("\n").slice(1);
        expect(after.slice(0, before.length)).toEqual(before);
    });
});
