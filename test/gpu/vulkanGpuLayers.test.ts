import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listening, startServe, stopServe, type ServeProcess } from "../cli/serveProcess.js";

const API_KEY = "gpu-layers-key-1";

/** A small engine; the backend and the layers on it are added per server. */
const ENGINE_ARGS = ["--context", "256", "--decode-sequences", "2", "--page-tokens", "16"];

const PROMPTS = ["Where do pages go?", "Name three colours of the sea."];
const MAX_TOKENS = 12;

interface Started {
    readonly server: ServeProcess;
    readonly url: string;
}

async function startOn(dataDir: string, backendArgs: readonly string[]): Promise<Started> {
    const server = startServe(["--port", "0", "--data-dir", dataDir, ...ENGINE_ARGS, ...backendArgs], { KVAULT_API_KEY: API_KEY });
    return { server, url: await listening(server, 180_000) };
}

async function getJson<T>(url: string): Promise<T> {
    const response = await fetch(url, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(response.status, url).toBe(200);
    return (await response.json()) as T;
}

/** Each prompt's greedy answer, one after another. */
async function greedyAnswers(url: string): Promise<string[]> {
    const answers: string[] = [];
    for (const content of PROMPTS) {
        const response = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content }], max_tokens: MAX_TOKENS, temperature: 0 })
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { choices: { message: { content: string } }[] };
        answers.push(body.choices[0]!.message.content);
    }
    return answers;
}

describe("a headless server with --gpu vulkan --gpu-layers 1: one layer on the device, the rest on the CPU", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-gpu-layers-"));
    let onDevice: Started | undefined;
    let onCpu: Started | undefined;

    beforeAll(async () => {
        onDevice = await startOn(dataDir, ["--gpu", "vulkan", "--gpu-layers", "1"]);
    });
    afterAll(async () => {
        for (const started of [onDevice, onCpu]) {
            if (started !== undefined) {
                await stopServe(started.server);
            }
        }
        fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("reports 1 of the model's layers on the device as planned in /health, /v1/models and the start log", async () => {
        const { url, server } = onDevice!;
        const health = await getJson<{
            compute: {
                backend: string;
                devices: { name: string }[];
                layers_on_device: number;
                layers_planned: number;
                layers_total: number;
            };
        }>(`${url}/health`);
        const total = health.compute.layers_total;
        console.log(`backend ${health.compute.backend}, ${health.compute.layers_on_device} of ${total} layers on the device`);
        expect(health.compute).toMatchObject({
            backend: "vulkan",
            devices: [{ name: expect.stringMatching(/^llvmpipe/) }],
            layers_on_device: 1,
            layers_planned: 1
        });
        expect(total, "the tiny model's layers and its output layer").toBeGreaterThan(1);
        const placed = `1 of ${total} layers on the device as planned, the other ${total - 1} on the CPU`;
        const models = await getJson<{ data: { kvault: { backend: string } }[] }>(`${url}/v1/models`);
        expect(models.data[0]!.kvault.backend).toContain(placed);
        expect(server.stderr()).toContain(placed);
    });

    it("answers greedy as a server on the CPU alone does", async () => {
        const deviceAnswers = await greedyAnswers(onDevice!.url);
        await stopServe(onDevice!.server);
        onDevice = undefined;
        onCpu = await startOn(dataDir, ["--gpu", "off"]);
        const cpuAnswers = await greedyAnswers(onCpu.url);
        console.log(`answers on vulkan with 1 layer: ${JSON.stringify(deviceAnswers)}`);
        expect(deviceAnswers.every((answer) => answer.length > 0)).toBe(true);
        expect(deviceAnswers).toEqual(cpuAnswers);
    });
});
