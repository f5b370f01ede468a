import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActiveTurn, RpcServerMessage } from "../../../contract/rpc.js";
import type { StoredMessage } from "../../../contract/workspaces.js";
import { WorkspaceStore } from "../../../host/store/WorkspaceStore.js";
import { listening, startServe, stopServe, type ServeProcess } from "../../cli/serveProcess.js";
import { RawClient } from "./rpcHost.js";

// Issue 14, item 8, through `npm run serve` and its RPC WebSocket: a chat's turn (chat with an
// answerId) is the host's. It runs on when the socket that started it closes, a new socket
// attaches to it and gets the whole answer, any socket can stop it, and the host keeps the answer
// (or what streamed before the Stop) in the stored chat, on disk: a new store on the data
// directory reads it back. The demo model at temperature 1 with seed 7 writes 75 tokens for this prompt, long
// enough to close a socket, and to stop, in the middle.
const API_KEY = "host-turns-key-0001";
const settings = { systemPrompt: "", temperature: 0, maxTokens: 1500 };

/** The text events of `requestId` a client heard, joined. */
function streamed(client: RawClient, requestId: string): string {
    return client.messages
        .filter((message): message is Extract<RpcServerMessage, { type: "text" }> => "type" in message && message.type === "text")
        .filter((message) => message.requestId === requestId)
        .map((message) => message.text)
        .join("");
}

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    for (let waited = 0; waited < timeoutMs; waited += 10) {
        if (condition()) {
            return;
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

function resultOf(reply: RpcServerMessage): unknown {
    if (!("id" in reply) || "error" in reply) {
        throw new Error(`expected a result, got ${JSON.stringify(reply).slice(0, 300)}`);
    }
    return reply.result;
}

describe("a chat's turn belongs to the host (npm run serve, RPC WebSocket)", () => {
    let scratch: string;
    let dataDir: string;
    let server: ServeProcess | undefined;
    let url: string;
    let nextId = 1;
    const clients: RawClient[] = [];
    const connect = async (): Promise<RawClient> => {
        const client = await RawClient.connect(url, { key: API_KEY });
        clients.push(client);
        return client;
    };
    const call = async (client: RawClient, method: string, params: unknown): Promise<RpcServerMessage> =>
        client.call(nextId++, method, params, 120_000);
    /** A stored workspace with the user's message, as the page saves it before the turn. */
    const workspaceWithQuestion = async (client: RawClient, id: string, question: string): Promise<void> => {
        resultOf(await call(client, "saveWorkspace", { workspace: { id, name: id, colour: 0, settings } }));
        resultOf(await call(client, "appendMessage", { workspace: id, message: { id: `${id}-q`, role: "user", content: question } }));
    };
    const startTurn = (client: RawClient, workspace: string, requestId: string, answerId: string, answerParent?: string): number => {
        const id = nextId++;
        client.socket.send(
            JSON.stringify({
                id,
                method: "chat",
                params: {
                    requestId,
                    answerId,
                    ...(answerParent === undefined ? {} : { answerParent }),
                    workspace,
                    messages: [{ role: "user", content: "Tell me a long story about the sea." }],
                    sampling: { temperature: 1, seed: 7, maxTokens: settings.maxTokens }
                }
            })
        );
        return id;
    };

    beforeAll(async () => {
        scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-host-turns-"));
        dataDir = path.join(scratch, "data");
        // 20 ms per token (the streaming demo mode): the answer lasts seconds (1.8 s here), long
        // enough to close a socket and attach another mid-answer, however fast this machine decodes it.
        const args = ["--port", "0", "--data-dir", dataDir, "--context", "2048", "--decode-sequences", "2", "--page-tokens", "16"];
        server = startServe([...args, "--stream-demo", "20"], {
            KVAULT_API_KEY: API_KEY
        });
        url = await listening(server);
    });

    afterAll(async () => {
        for (const client of clients) {
            client.socket.terminate();
        }
        if (server !== undefined) {
            await stopServe(server);
        }
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it("runs on when its socket closes; a new socket attaches, hears the text so far and the rest, and the answer is in the chat", async () => {
        const first = await connect();
        await workspaceWithQuestion(first, "ui-sea", "Tell me a long story about the sea.");
        const chatId = startTurn(first, "ui-sea", "turn-sea", "m-sea-answer", "ui-sea-q");
        await until(() => streamed(first, "turn-sea").length >= 20, "the first socket hears some of the answer");
        first.socket.close();
        await first.untilClosed();
        const heardBeforeClose = streamed(first, "turn-sea");
        expect(first.messages.some((message) => "id" in message && message.id === chatId)).toBe(false);

        const second = await connect();
        const active = resultOf(await call(second, "activeTurns", {})) as ActiveTurn[];
        expect(
            active.map(({ requestId, workspace, answerId, answerParent }) => ({ requestId, workspace, answerId, answerParent }))
        ).toEqual([{ requestId: "turn-sea", workspace: "ui-sea", answerId: "m-sea-answer", answerParent: "ui-sea-q" }]);
        expect(active[0]!.numChars).toBeGreaterThanOrEqual(heardBeforeClose.length);
        const answer = resultOf(await call(second, "attachTurn", { requestId: "turn-sea" })) as { text: string; finishReason: string };
        expect(answer.text.startsWith(heardBeforeClose)).toBe(true);
        expect(answer.text.length).toBeGreaterThan(heardBeforeClose.length);
        expect(streamed(second, "turn-sea"), "the text so far as one event, then the rest live").toBe(answer.text);
        const textEvents = second.messages.filter((message) => "type" in message && message.type === "text");
        expect(textEvents.length, "the rest came live, in more than the one catch-up event").toBeGreaterThan(1);

        // Kept by the host, on disk before the turn's end was announced.
        const loaded = resultOf(await call(second, "loadWorkspaces", {})) as { workspaces: { id: string; messages: unknown[] }[] };
        expect(loaded.workspaces.find((workspace) => workspace.id === "ui-sea")!.messages).toEqual([
            { id: "ui-sea-q", role: "user", content: "Tell me a long story about the sea." },
            expect.objectContaining({
                id: "m-sea-answer",
                role: "assistant",
                content: answer.text,
                finish: answer.finishReason,
                parent: "ui-sea-q"
            })
        ]);
        // Timed and stamped by the host, though the page that started it was gone before its end.
        const kept = loaded.workspaces.find((workspace) => workspace.id === "ui-sea")!.messages[1] as StoredMessage;
        expect(kept.at).toBeGreaterThan(0);
        expect(kept.timing!.firstTokenMs).toBeGreaterThanOrEqual(0);
        expect(kept.timing!.totalMs).toBeGreaterThan(kept.timing!.firstTokenMs);
        expect(resultOf(await call(second, "activeTurns", {}))).toEqual([]);
        // A page attaching just after the end still gets the answer.
        expect(resultOf(await call(second, "attachTurn", { requestId: "turn-sea" }))).toEqual(answer);
        const unknown = await call(second, "attachTurn", { requestId: "turn-never" });
        expect(unknown).toMatchObject({ error: { code: "turn_not_found" } });
    });

    it("stops from another socket; what streamed before the Stop is kept as a stopped answer", async () => {
        const starter = await connect();
        const other = await connect();
        await workspaceWithQuestion(starter, "ui-stop", "Tell me a long story about the sea.");
        const chatId = startTurn(starter, "ui-stop", "turn-stop", "m-stop-answer");
        await until(() => streamed(starter, "turn-stop").length >= 20, "the starter hears some of the answer");
        expect(resultOf(await call(other, "cancel", { requestId: "turn-stop" }))).toEqual({ cancelled: true });
        const ended = await starter.reply(chatId, 60_000);
        expect(ended).toMatchObject({ error: { code: "turn_stopped" } });
        const kept = streamed(starter, "turn-stop");
        expect("error" in ended && ended.error.message).toContain(
            `the ${kept.length.toLocaleString("en-US")} characters written before the Stop are kept`
        );
        const loaded = resultOf(await call(other, "loadWorkspaces", {})) as { workspaces: { id: string; messages: unknown[] }[] };
        const { modelName } = resultOf(await call(other, "info", {})) as { modelName: string };
        expect(loaded.workspaces.find((workspace) => workspace.id === "ui-stop")!.messages.at(-1)).toEqual({
            id: "m-stop-answer",
            role: "assistant",
            content: kept,
            finish: "stopped",
            model: modelName,
            at: expect.any(Number) as number,
            timing: { firstTokenMs: expect.any(Number) as number, totalMs: expect.any(Number) as number }
        });
    });

    it("keeps both answers on disk: a new store on the data directory reads them back", async () => {
        expect(await stopServe(server!)).toEqual({ code: 0, signal: null });
        server = undefined;
        const store = await WorkspaceStore.open(dataDir);
        try {
            const { workspaces } = await store.load();
            const answers = Object.fromEntries(workspaces.map((workspace) => [workspace.id, workspace.messages.at(-1)]));
            expect(answers["ui-sea"]).toMatchObject({
                id: "m-sea-answer",
                role: "assistant",
                parent: "ui-sea-q",
                timing: { firstTokenMs: expect.any(Number) as number },
                finish: expect.stringMatching(/^(stop|length)$/)
            });
            expect(answers["ui-sea"]!.content.length).toBeGreaterThan(20);
            expect(answers["ui-stop"]).toMatchObject({ id: "m-stop-answer", role: "assistant", finish: "stopped" });
        } finally {
            await store.close();
        }
    });
});
