import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listening, RpcSocket, startServe, stopServe, type ServeProcess } from "../../cli/serveProcess.js";
import { privateLavapipeEnv } from "../../support/privateLavapipe.js";

const API_KEY = "compute-backend-key-1";
/** serveProcess' small engine, without its --gpu off: these tests name the backend themselves. */
const ENGINE_ARGS = ["--context", "512", "--decode-sequences", "2", "--page-tokens", "16"];

interface Reports {
    readonly health: { compute: Record<string, unknown> };
    readonly model: { kvault: { backend: string; compute: Record<string, unknown> } };
    readonly metrics: string;
    readonly ps: { models: { size: number; size_vram: number }[] };
}

/** What the server says it computes on, wherever a user or a tool looks: /health, /v1/models, /metrics, Ollama's /api/ps. */
async function reports(url: string): Promise<Reports> {
    const get = async (route: string): Promise<Response> => {
        const response = await fetch(`${url}${route}`, { headers: { authorization: `Bearer ${API_KEY}` } });
        expect(response.status, route).toBe(200);
        return response;
    };
    const models = (await (await get("/v1/models")).json()) as { data: Reports["model"][] };
    return {
        health: (await (await get("/health")).json()) as Reports["health"],
        model: models.data[0]!,
        metrics: await (await get("/metrics")).text(),
        ps: (await (await get("/api/ps")).json()) as Reports["ps"]
    };
}

// The driver is visible to each server's processes alone (their environment), never system-wide.
describe("the compute backend a headless server chooses, and reports, with Mesa's lavapipe installed", () => {
    let server: ServeProcess | undefined;
    let socket: RpcSocket | undefined;
    const dataDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), "kvault-compute-"));
    const directories: string[] = [];
    const start = (gpu: string, env: Record<string, string>): ServeProcess => {
        const directory = dataDir();
        directories.push(directory);
        server = startServe(["--port", "0", "--data-dir", directory, ...ENGINE_ARGS, "--gpu", gpu], { KVAULT_API_KEY: API_KEY, ...env });
        return server;
    };
    afterEach(async () => {
        socket?.close();
        socket = undefined;
        if (server !== undefined) {
            await stopServe(server);
            server = undefined;
        }
        for (const directory of directories.splice(0)) {
            fs.rmSync(directory, { recursive: true, force: true });
        }
    });

    it("--gpu auto leaves the Vulkan binary that finds no device for the CPU and Kvault's local build, says why, and plans nothing on a GPU", async () => {
        const url = await listening(start("auto", privateLavapipeEnv({ visible: false })));
        const { health, model, metrics, ps } = await reports(url);
        const fallback = "node-llama-cpp's vulkan binary found no device, so the engine runs on the CPU";
        expect(health.compute).toEqual({
            backend: "cpu",
            binary: "local build",
            devices: [],
            layers_on_device: 0,
            layers_total: 3,
            layers_planned: 0,
            device_memory_used_bytes: null,
            device_memory_total_bytes: null,
            fallback
        });
        expect(model.kvault.compute).toEqual(health.compute);
        expect(model.kvault.backend).toMatch(/^cpu, local build, \d+ threads \(auto: node-llama-cpp's vulkan binary found no device/);
        expect(metrics).toContain('kvault_compute_info{backend="cpu",binary="local build",devices="",device_types=""} 1');
        expect(metrics).toContain('kvault_model_layers{where="cpu"} 3');
        expect(ps.models[0]!.size_vram).toBe(0);
        expect(server!.stderr()).toContain(`on cpu, local build, `);

        // the settings screen's plan: the decode context's KV and every other line in RAM, no byte on a GPU
        socket = await RpcSocket.connect(url, API_KEY);
        const plan = await socket.result<{ vramNeededBytes: number; memory: { what: string; where: string }[] }>("planEngineSettings", {
            kvCacheType: "q8_0" // not given on the command line, so the screen may change it
        });
        expect(plan.memory.map((line) => line.what)).toEqual(["weights", "decodeKv", "prefillKv", "pagePool"]);
        expect(plan.memory.filter((line) => line.where !== "ram")).toEqual([]);
        expect(plan.vramNeededBytes).toBe(0);
    });

    it("--gpu vulkan with llvmpipe visible runs on it, reported as a cpu device with its layers and memory", async () => {
        const url = await listening(start("vulkan", privateLavapipeEnv({ visible: true })));
        const { health, model, metrics, ps } = await reports(url);
        // node-llama-cpp's prebuilt Vulkan binary, or Kvault's Vulkan build where `npm run build-llama -- --gpu vulkan` made one
        expect(health.compute).toMatchObject({
            backend: "vulkan",
            binary: expect.stringMatching(/^(prebuilt|local build|portable build|patched prebuilt)$/),
            devices: [{ name: expect.stringMatching(/^llvmpipe/), type: "cpu" }],
            layers_on_device: 3,
            layers_total: 3,
            layers_planned: 3
        });
        expect(health.compute.device_memory_total_bytes).toBeGreaterThan(0);
        expect(health.compute.device_memory_used_bytes).toBeGreaterThanOrEqual(0);
        expect(model.kvault.compute).toEqual(health.compute);
        expect(model.kvault.backend).toMatch(/^vulkan, [a-z ]+, llvmpipe .* \(cpu device\), 3 of 3 layers on the device, /);
        expect(metrics).toMatch(/kvault_compute_info\{backend="vulkan",binary="[a-z ]+",devices="llvmpipe [^"]*",device_types="cpu"\} 1/);
        expect(metrics).toContain('kvault_model_layers{where="device"} 3');
        expect(ps.models[0]!.size_vram).toBe(ps.models[0]!.size);
    });

    it("--gpu vulkan where ggml sees no device is refused at start, saying how to name llvmpipe or run on the CPU", async () => {
        const refused = start("vulkan", privateLavapipeEnv({ visible: false }));
        await expect(listening(refused)).rejects.toThrow(
            /--gpu vulkan: the vulkan binary loaded but found no device \(.*GGML_VK_VISIBLE_DEVICES=0\)\. Give --gpu auto or --gpu off to run on the CPU\./
        );
    });
});
