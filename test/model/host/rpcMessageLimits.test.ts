// Issue 14, item 1: one RPC WebSocket message over 8 MiB used to end the whole headless server (ws's
// "Max payload size exceeded" on a socket without an 'error' handler). A big message the UI can
// legitimately send is served; one over the limit is answered with a typed error; one over twice
// the limit closes that socket only; the server, the API and every other socket go on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcLimits } from "../../../contract/limits.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { API_KEY, RawClient, startRpcHost, type RpcHost } from "./rpcHost.js";

const workspace = { id: "ui-big", name: "Big", colour: 0, settings: { systemPrompt: "", temperature: 0, maxTokens: 8 } };

describe("one RPC message never ends the server", () => {
    let service: EngineService;
    let host: RpcHost;
    beforeAll(async () => {
        service = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false });
        host = await startRpcHost(service, { withStore: true });
    });
    afterAll(async () => {
        await host.close();
        await service.dispose();
    });

    /** The server still serves the page's RPC on `client` and on a new socket, and the HTTP API. */
    async function expectServing(client: RawClient, id: number): Promise<void> {
        expect(await client.call(id, "info", {})).toMatchObject({ id, result: { numDecodeSequences: 2 } });
        const fresh = await RawClient.connect(host.url);
        expect(await fresh.call(1, "listModels", {})).toEqual({ id: 1, result: { models: [], problems: [] } });
        fresh.socket.close();
        const models = await fetch(`${host.url}/v1/models`, { headers: { Authorization: `Bearer ${API_KEY}` } });
        expect(models.status).toBe(200);
    }

    it("serves a 9 MB message (3,000,000 CJK characters in one chat message): stored, and read back whole", async () => {
        const client = await RawClient.connect(host.url);
        const content = "漢".repeat(3_000_000);
        const frame = JSON.stringify({
            id: 2,
            method: "appendMessage",
            params: { workspace: workspace.id, message: { id: "m-1", role: "user", content } }
        });
        expect(Buffer.byteLength(frame)).toBeGreaterThan(9_000_000);
        expect(await client.call(1, "saveWorkspace", { workspace })).toEqual({ id: 1, result: {} });
        client.socket.send(frame);
        expect(await client.reply(2, 60_000)).toEqual({ id: 2, result: {} });
        const loaded = (await client.call(3, "loadWorkspaces", {}, 60_000)) as {
            result: { workspaces: { messages: { content: string }[] }[] };
        };
        expect(loaded.result.workspaces[0]!.messages[0]!.content).toHaveLength(3_000_000);
        await expectServing(client, 4);
        client.socket.close();
    });

    it("answers a message over the limit with rpc_message_too_large naming the numbers, by its id, and keeps the socket", async () => {
        const client = await RawClient.connect(host.url);
        const bystander = await RawClient.connect(host.url);
        const numBytes = rpcLimits.maxMessageBytes + 1_000;
        const frame = `{"id":7,"method":"appendMessage","params":{"workspace":"ui-big","message":{"id":"m-2","role":"user","content":"${"x".repeat(numBytes - 95)}"}}}`;
        const size = Buffer.byteLength(frame);
        expect(size).toBeGreaterThan(rpcLimits.maxMessageBytes);
        client.socket.send(frame);
        expect(await client.reply(7, 60_000)).toEqual({
            id: 7,
            error: {
                code: "rpc_message_too_large",
                message: `This RPC message is ${size.toLocaleString("en-US")} bytes (UTF-8); Kvault carries at most ${rpcLimits.maxMessageBytes.toLocaleString("en-US")} bytes in one, so it was not sent on. Shorten the chat (start a new one) or the text you are sending.`
            }
        });
        expect(client.closed).toBeUndefined();
        await expectServing(client, 8);
        await expectServing(bystander, 1);
        client.socket.close();
        bystander.socket.close();
    });

    it("closes only the socket of a message over twice the limit (1009), unread; the server and the other sockets go on", async () => {
        const client = await RawClient.connect(host.url);
        const bystander = await RawClient.connect(host.url);
        client.socket.send(Buffer.alloc(2 * rpcLimits.maxMessageBytes + 1, "y").toString("latin1"));
        expect((await client.untilClosed(60_000)).code).toBe(1009);
        expect(host.logged.some((line) => /closed an RPC connection \(1009\): a message was over 67,108,864 bytes/.test(line))).toBe(true);
        await expectServing(bystander, 1);
        bystander.socket.close();
    });
});
