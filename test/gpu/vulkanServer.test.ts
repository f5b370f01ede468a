import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResourceUse } from "../../contract/resourceUse.js";
import { listening, RpcSocket, startServe, stopServe, type ServeProcess } from "../cli/serveProcess.js";

const API_KEY = "gpu-server-key-1";

/**
 * The 2026 incident's configuration on the device: a 512-token window over a prefill context of 256.
 * The server inherits the Vulkan driver and GGML_VK_VISIBLE_DEVICES from the gpu project's globalSetup.
 */
const SERVER_ARGS = ["--context", "512", "--prefill-capacity", "256", "--decode-sequences", "2", "--page-tokens", "16", "--gpu", "vulkan"];

/** A user message of the tiny model's that needs more than the prefill's 256 tokens and less than the 512 configured. */
const LONG_MESSAGE = "Kvault keeps each workspace's pages apart. ".repeat(10);

async function chat(url: string, content: string, maxTokens: number): Promise<Response> {
    return fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content }], max_tokens: maxTokens, temperature: 0 })
    });
}

describe("a headless server on Vulkan, every layer on the device, in the 2026 configuration", () => {
    let dataDir: string;
    let server: ServeProcess;
    let url: string;
    let socket: RpcSocket;
    beforeAll(async () => {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-gpu-server-"));
        server = startServe(["--port", "0", "--data-dir", dataDir, ...SERVER_ARGS], { KVAULT_API_KEY: API_KEY });
        url = await listening(server, 180_000);
        socket = await RpcSocket.connect(url, API_KEY);
    });
    afterAll(async () => {
        socket?.close();
        if (server !== undefined) {
            await stopServe(server);
        }
        fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("reports the Vulkan backend on llvmpipe, in Kvault's patched build, with every layer on the device", async () => {
        const health = (await (await fetch(`${url}/health`, { headers: { authorization: `Bearer ${API_KEY}` } })).json()) as {
            compute: { backend: string; devices: { name: string; type: string }[]; layers_on_device: number; layers_total: number };
        };
        console.log(`backend ${health.compute.backend}, device ${health.compute.devices.map((device) => device.name).join(", ")}`);
        expect(health.compute).toMatchObject({
            backend: "vulkan",
            binary: "patched prebuilt",
            devices: [{ name: expect.stringMatching(/^llvmpipe/), type: "cpu" }]
        });
        expect(health.compute).not.toHaveProperty("slower_path");
        expect(health.compute.layers_on_device).toBe(health.compute.layers_total);
    });

    it("clamps the window to the prefill's 256 and answers a longer prompt 400 context_length_exceeded with the numbers; a short one is served", async () => {
        expect(server.stderr()).toContain("The window was clamped from 512 to 256 tokens: the measured prefill capacity is smaller.");
        const refused = await chat(url, LONG_MESSAGE, 8);
        expect(refused.status).toBe(400);
        const { error } = (await refused.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe("context_length_exceeded");
        const needed =
            /^This request needs (\d+) tokens \(\d+ of prompt \+ 8 to generate\); the limit is 256, set by the measured prefill capacity\./.exec(
                error.message
            );
        expect(needed, error.message).not.toBeNull();
        expect(Number(needed![1]), "between the prefill capacity and the configured window").toBeGreaterThan(256);
        expect(Number(needed![1])).toBeLessThanOrEqual(512);

        const served = await chat(url, "Where do pages go?", 4);
        expect(served.status).toBe(200);
        const body = (await served.json()) as { usage: { completion_tokens: number } };
        expect(body.usage.completion_tokens).toBeGreaterThan(0);
    });

    it("plans each context's KV and the weights in device memory, the page pool in RAM, and meters the device's memory", async () => {
        const plan = await socket.result<{ memory: { what: string; where: string }[]; vramNeededBytes: number }>("planEngineSettings", {
            kvCacheType: "q8_0"
        });
        expect(plan.memory.map((line) => [line.what, line.where])).toEqual([
            ["weights", "vram"],
            ["decodeKv", "vram"],
            ["prefillKv", "vram"],
            ["pagePool", "ram"]
        ]);
        expect(plan.vramNeededBytes).toBeGreaterThan(0);

        const use = await socket.result<ResourceUse>("resourceUse", {});
        expect(use.vram?.totalBytes, "the device's memory, as node-llama-cpp measures it").toBeGreaterThan(0);
        // each context's KV where its layers are, on the device; the pool's pages in RAM
        expect(use.kv.map((role) => [role.role, role.where])).toEqual([
            ["prefill", "device"],
            ["decode", "device"],
            ["pool", "ram"]
        ]);
    });
});
