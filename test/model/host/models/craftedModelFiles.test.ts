import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelDownload } from "../../../../contract/models.js";
import { childInspector } from "../../../../host/models/inspectModelInChild.js";
import { forkEngineSpawner } from "../../../../host/supervisor/forkEngineProcess.js";
import { demoModelPath } from "../../../../main/engine/resolveAppModel.js";
import { startEngine } from "../../../../main/engine/startEngine.js";
import {
    listening,
    peakRssBytes,
    RpcSocket,
    smallEngineArgs,
    startServe,
    stopServe,
    type ServeProcess
} from "../../../cli/serveProcess.js";
import { startModelFileServer, type ModelFileServer } from "../../../support/modelFileServer.js";
import { craftedGgufFiles, craftedRefusal, writeCraftedGguf, type CraftedGguf } from "./craftedGgufFiles.js";

// Issue 14, item 2, through the public interfaces of `npm run serve`: the two crafted model files
// (69 and 24 bytes) that ended or pinned the host through node-llama-cpp's reader, by the model
// panel's inspect, a model switch, a finished download from a web server, and --model at start.
// Each is a typed model_unreadable; the server keeps serving; its memory stays bounded.
const crafted = Object.keys(craftedGgufFiles) as CraftedGguf[];
/** The host's peak resident memory after all of it (it serves the renderer, the API and the RPC; the engine is another process). */
const HOST_PEAK_RSS_BYTES = 1024 * 1024 * 1024;
const API_KEY = "crafted-model-key-1";

describe("crafted model files against the running server", () => {
    let scratch: string;
    let server: ServeProcess;
    let url: string;
    let rpc: RpcSocket;
    let files: ModelFileServer;

    beforeAll(async () => {
        scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-crafted-"));
        server = startServe(["--port", "0", "--data-dir", path.join(scratch, "data"), ...smallEngineArgs], { KVAULT_API_KEY: API_KEY });
        url = await listening(server);
        rpc = await RpcSocket.connect(url, API_KEY);
        files = await startModelFileServer();
    });

    afterAll(async () => {
        rpc?.close();
        await files?.close();
        if (server !== undefined) {
            expect(await stopServe(server)).toEqual({ code: 0, signal: null });
        }
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it.each(crafted)(
        "%s: inspectModel and switchModel answer model_unreadable with the numbers; the engine keeps its model",
        async (name) => {
            const filePath = writeCraftedGguf(scratch, name);
            expect(await rpc.call("inspectModel", { path: filePath })).toMatchObject({
                error: { code: "model_unreadable", message: craftedRefusal(filePath, name) }
            });
            expect(await rpc.call("switchModel", { model: filePath })).toMatchObject({
                error: { code: "model_unreadable", message: craftedRefusal(filePath, name) }
            });
            expect(await rpc.result("info", {})).toMatchObject({ modelPath: expect.stringMatching(/tiny-v\d+\.gguf$/) });
        }
    );

    it.each(crafted)("%s: a finished download of it fails with model_unreadable, and is deleted", async (name) => {
        files.serve(`${name}.gguf`, { body: craftedGgufFiles[name].bytes(), ranges: true });
        const started = await rpc.result<ModelDownload>("startDownload", { source: `${files.url}/${name}.gguf` });
        let download = started;
        for (let attempt = 0; attempt < 600 && download.state === "downloading"; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            download = (await rpc.result<ModelDownload[]>("listDownloads", {})).find((entry) => entry.id === started.id)!;
        }
        expect(download).toMatchObject({
            state: "failed",
            resumable: false,
            error: {
                code: "model_unreadable",
                message: `The download is not a usable model, so it was deleted: ${craftedRefusal(download.path, name)}`
            }
        });
        expect(fs.existsSync(download.path)).toBe(false);
    });

    it("keeps serving all along: the RPC, the OpenAI API and /health, with bounded memory", async () => {
        const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, maxRetries: 0 });
        const answer = await client.chat.completions.create({
            model: "tiny",
            messages: [{ role: "user", content: "hello" }],
            max_tokens: 4,
            temperature: 0 // greedy: sampled, the random-weight model can end at once (an empty answer; seen once in a full run)
        });
        expect(answer.choices[0]!.message.content!.length).toBeGreaterThan(0);
        expect((await fetch(`${url}/health`)).status).toBe(200);
        expect(await rpc.result("listModels", {})).toBeDefined();
        expect(server.child.exitCode).toBeNull();
        expect(peakRssBytes(server.pid)).toBeLessThan(HOST_PEAK_RSS_BYTES);
    });
});

describe("crafted model files given with --model at start", () => {
    it.each(crafted)("%s: refused with model_unreadable's message and exit code 1, before the engine starts", async (name) => {
        const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-crafted-start-"));
        try {
            const filePath = writeCraftedGguf(scratch, name);
            const server = startServe(["--port", "0", "--data-dir", path.join(scratch, "data"), "--model", filePath, ...smallEngineArgs], {
                KVAULT_API_KEY: API_KEY
            });
            const timer = setTimeout(() => server.child.kill("SIGKILL"), 60_000); // a pinned start is a failure below, not a hang
            const exited = await server.exit;
            clearTimeout(timer);
            expect(exited, server.stderr()).toEqual({ code: 1, signal: null });
            expect(server.stdout).toEqual([]);
            expect(server.stderr()).toContain(craftedRefusal(filePath, name));
        } finally {
            fs.rmSync(scratch, { recursive: true, force: true });
        }
    });
});

describe("crafted model files as the app's model setting", () => {
    it.each(crafted)(
        "%s: the app's engine start refuses it with model_unreadable; no engine sees it, and the demo model runs instead",
        async (name) => {
            const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-crafted-app-"));
            try {
                const filePath = writeCraftedGguf(scratch, name);
                const spawnedModels: string[] = [];
                const spawner = forkEngineSpawner();
                const starting = startEngine({
                    modelsDirectory: path.join(scratch, "models"),
                    libraryFile: path.join(scratch, "models.json"),
                    modelPath: filePath,
                    // The app's spawners are Electron's utilityProcess; these are the headless host's, for the same start.
                    spawner: {
                        spawnEngineProcess: (config) => {
                            spawnedModels.push(config.modelPath);
                            return spawner.spawnEngineProcess(config);
                        }
                    },
                    inspectModel: childInspector(),
                    log: () => undefined
                });
                // The app stays usable: the saved model's refusal is the fallback's reason, and only the demo model reaches an engine.
                const started = await starting;
                try {
                    expect(started.fallback).toEqual({ modelPath: filePath, reason: craftedRefusal(filePath, name) });
                    expect(started.modelId()).toBe("tiny");
                    expect(spawnedModels).toEqual([demoModelPath(path.join(scratch, "models"))]);
                } finally {
                    await started.supervisor.dispose();
                }
            } finally {
                fs.rmSync(scratch, { recursive: true, force: true });
            }
        }
    );
});
