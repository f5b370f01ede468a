import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { EngineService } from "../../../engine/service/EngineService.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath, repositoryRoot } from "../../support/generatedModels.js";
import { RawClient, startRpcHost, type RpcHost } from "./rpcHost.js";

describe("the renderer's RPC over a WebSocket (headless mode)", () => {
    let service: EngineService;
    let host: RpcHost;
    let url: string;
    beforeAll(async () => {
        service = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false });
        host = await startRpcHost(service);
        url = host.url;
    });
    afterAll(async () => {
        await host.close();
        await service.dispose();
    });

    it("streams a chat turn's events and answers it", async () => {
        const client = await RawClient.connect(url);
        const answer = await client.call(1, "chat", {
            requestId: "t1",
            workspace: "w",
            messages: [{ role: "user", content: "hello" }],
            sampling: { temperature: 0, maxTokens: 5 }
        });
        expect(answer).toMatchObject({ id: 1, result: { finishReason: "length", usage: { completionTokens: 5 } } });
        const events = client.messages.filter((message) => "type" in message);
        expect(events[0]).toEqual({ type: "started", requestId: "t1" });
        const streamed = events
            .filter((message) => message.type === "text")
            .map((message) => (message as { text: string }).text)
            .join("");
        expect(streamed).toBe((answer as { result: { text: string } }).result.text);
        expect(await client.call(2, "measure", { workspace: "w", messages: [], draft: "a draft" })).toMatchObject({
            id: 2,
            result: { fits: true, limit: 256 }
        });
        client.socket.close();
    });

    it("audits, lists replayable turns and replays one, lists the drills and runs one, over the socket", async () => {
        const client = await RawClient.connect(url);
        expect(
            await client.call(1, "chat", {
                requestId: "iso-1",
                workspace: "iso",
                messages: [{ role: "user", content: "hello there" }],
                sampling: { temperature: 0, maxTokens: 5 }
            })
        ).toMatchObject({ id: 1, result: { usage: { completionTokens: 5 } } });
        expect(await client.call(2, "audit", {})).toMatchObject({
            id: 2,
            result: { ok: true, violations: [], numViolations: 0, numPagesChecked: 48 }
        });
        const turns = (await client.call(3, "replayableTurns", {})) as {
            result: { requestId: string; workspace: string; numTokens: number }[];
        };
        expect(turns.result).toContainEqual({ requestId: "iso-1", workspace: "iso", numTokens: 5 });
        expect(await client.call(4, "replay", { requestId: "iso-1" })).toMatchObject({
            id: 4,
            result: { requestId: "iso-1", numTokens: 5, identical: true }
        });
        expect(await client.call(5, "replay", { requestId: "never-served" })).toMatchObject({
            id: 5,
            error: { code: "replay_unavailable" }
        });
        expect(await client.call(6, "replay", { requestId: 42 })).toMatchObject({ id: 6, error: { code: "invalid_request" } });
        const drills = (await client.call(7, "listDrills", {})) as { result: { id: string }[] };
        expect(drills.result.map((drill) => drill.id)).toEqual([
            "foreign-manifest",
            "flipped-byte",
            "skipped-scrub",
            "late-write",
            "undersized-prefill-pool",
            "dropped-pages",
            "replayed-completion"
        ]);
        client.socket.send(JSON.stringify({ id: 8, method: "runDrill", params: { id: "flipped-byte" } }));
        expect(await client.reply(8, 120_000)).toMatchObject({
            id: 8,
            result: {
                id: "flipped-byte",
                guardFired: true,
                guardError: { code: "handoff_checksum_mismatch" },
                victimClean: true,
                leakObservedWithGuardOff: true
            }
        });
        expect(await client.call(9, "runDrill", { id: "no-such-drill" })).toMatchObject({ id: 9, error: { code: "unknown_drill" } });
        expect(await client.call(10, "runDrill", { id: "" })).toMatchObject({ id: 10, error: { code: "invalid_request" } });
        expect(await client.call(11, "runDrill", { id: "d".repeat(300) })).toMatchObject({ id: 11, error: { code: "invalid_request" } });
        expect(await client.call(12, "audit", {})).toMatchObject({ id: 12, result: { ok: true } });
        client.socket.close();
    });

    it("inspects a model over the socket: a GGUF's facts, a file that is not GGUF refused with model_not_gguf", async () => {
        const client = await RawClient.connect(url);
        expect(await client.call(1, "inspectModel", { path: generatedModelPath("tiny") })).toMatchObject({
            id: 1,
            result: { architecture: "llama", fileType: "MOSTLY_F16", estimate: { contextSize: 256, sequences: 2 } }
        });
        const notGguf = path.join(repositoryRoot, "package.json");
        expect(await client.call(2, "inspectModel", { path: notGguf })).toEqual({
            id: 2,
            error: {
                code: "model_not_gguf",
                message: `${notGguf} is not a GGUF file (it starts with "{\\n  "; a GGUF file starts with "GGUF"). Open a .gguf model file.`
            }
        });
        expect(await client.call(3, "inspectModel", { path: "" })).toMatchObject({ id: 3, error: { code: "invalid_request" } });
        expect(await client.call(4, "switchModel", { model: 7 })).toMatchObject({ id: 4, error: { code: "invalid_request" } });
        // Downloads and the library are the host's own (host/supervisor/modelMethods.ts); the params are checked first.
        expect(await client.call(7, "startDownload", { source: "" })).toMatchObject({ id: 7, error: { code: "invalid_request" } });
        expect(await client.call(8, "listDownloads", {})).toEqual({ id: 8, result: [] });
        expect(await client.call(9, "cancelDownload", { id: 5 })).toMatchObject({ id: 9, error: { code: "invalid_request" } });
        expect(await client.call(10, "cancelDownload", { id: "d1" })).toMatchObject({ id: 10, error: { code: "download_unknown" } });
        expect(await client.call(11, "resumeDownload", { id: "d1" })).toMatchObject({ id: 11, error: { code: "download_unknown" } });
        expect(await client.call(12, "listModels", {})).toEqual({ id: 12, result: { models: [], problems: [] } });
        expect(await client.call(13, "forgetModel", { id: "m1" })).toMatchObject({ id: 13, error: { code: "library_model_unknown" } });
        expect(await client.call(14, "forgetModel", { id: "m1", deleteFile: "yes" })).toMatchObject({
            id: 14,
            error: { code: "invalid_request" }
        });
        // The headless server has no settings screen: its settings are its options.
        expect(await client.call(15, "getSettings", {})).toMatchObject({ id: 15, error: { code: "settings_unavailable" } });
        expect(await client.call(16, "setLocalApi", { enabled: true, port: 8081 })).toMatchObject({
            id: 16,
            error: { code: "settings_unavailable" }
        });
        client.socket.close();
    });

    it("refuses a connection without the key or from another origin", async () => {
        await expect(RawClient.connect(url, { key: "wrong-key-000" })).rejects.toThrow(/401/);
        await expect(RawClient.connect(url, { origin: "http://evil.example" })).rejects.toThrow(/403/);
    });

    it("cancels a client's turns when it goes away, and frees their pages", async () => {
        const client = await RawClient.connect(url);
        client.socket.send(
            JSON.stringify({
                id: 1,
                method: "chat",
                params: {
                    requestId: "long",
                    workspace: "gone",
                    messages: [{ role: "user", content: "go on and on" }],
                    sampling: { temperature: 0, maxTokens: 200 }
                }
            })
        );
        for (
            let waited = 0;
            waited < 30_000 && !client.messages.some((message) => "type" in message && message.type === "text");
            waited += 10
        ) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const cancelledBefore = service.engine.counters.cancelled;
        client.socket.terminate();
        for (let waited = 0; waited < 10_000 && service.engine.counters.cancelled === cancelledBefore; waited += 10) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(service.engine.counters.cancelled).toBe(cancelledBefore + 1);
        for (let waited = 0; waited < 10_000 && service.engine.workspaces().some((session) => session.busy); waited += 10) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        } // the decode step in flight finishes
        await expectEngineClean(service.engine);
    });

    it("answers fuzzed frames with errors and never crashes or wedges", async () => {
        const client = await RawClient.connect(url);
        const frames: (string | Buffer)[] = [
            "not json",
            "null",
            "[]",
            "42",
            JSON.stringify({}),
            JSON.stringify({ id: "x", method: "info" }),
            JSON.stringify({ id: 1.5, method: "info" }),
            JSON.stringify({ id: 3, method: "explode" }),
            JSON.stringify({ id: 4, method: "chat", params: null }),
            JSON.stringify({ id: 5, method: "chat", params: { requestId: 7, workspace: [], messages: {}, sampling: "fast" } }),
            JSON.stringify({ id: 6, method: "measure", params: { workspace: 1 } }),
            JSON.stringify({
                id: 7,
                method: "chat",
                params: {
                    requestId: "big",
                    workspace: "w",
                    messages: [{ role: "user", content: "x".repeat(5_000_000) }],
                    sampling: { temperature: 0, maxTokens: 1 }
                }
            }),
            JSON.stringify({ id: 8, method: "cancel", params: { requestId: { nested: true } } }),
            Buffer.from([0, 1, 2, 255])
        ];
        for (const frame of frames) {
            client.socket.send(frame, { binary: Buffer.isBuffer(frame) });
        }
        for (const id of [3, 4, 5, 6, 7]) {
            expect(await client.reply(id)).toMatchObject({ id, error: { code: expect.any(String), message: expect.any(String) } });
        }
        // A cancel's requestId is checked like every other field (it was not, over this host, before the RPC spec).
        expect(await client.reply(8)).toMatchObject({
            id: 8,
            error: { code: "invalid_request", message: "requestId must be a string; got an object." }
        });
        expect(client.socket.readyState).toBe(WebSocket.OPEN);
        expect(await client.call(9, "info", {})).toMatchObject({ id: 9, result: { numDecodeSequences: 2 } });
        expect(
            await client.call(10, "chat", {
                requestId: "ok",
                workspace: "fine",
                messages: [{ role: "user", content: "still fine?" }],
                sampling: { temperature: 0, maxTokens: 3 }
            })
        ).toMatchObject({ id: 10, result: { usage: { completionTokens: 3 } } });
        client.socket.close();
        await expectEngineClean(service.engine);
    });
});
