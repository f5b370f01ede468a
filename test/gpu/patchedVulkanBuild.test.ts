import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvEngine } from "../../engine/KvEngine.js";
import { attachThreadpool } from "../../engine/runtime/addonPatch/contextThreadpool.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { snapshotRoles } from "../../engine/service/snapshotEngine.js";
import { expectEngineClean, freshWorkspace, promptOf, startTinyEngine } from "../support/engineFixtures.js";
import { generatedModelPath } from "../support/generatedModels.js";

// The patched build of the Vulkan backend (`npm run build-llama -- --gpu vulkan`, made by the gpu
// project's global setup): Kvault's addon compiled alone and linked against node-llama-cpp's prebuilt
// Vulkan libraries. The engine prefers it over the prebuilt, says so, and hands prompts off through
// memory on the device as the CPU's local build does.

const MAX_TOKENS = 8;

describe("Kvault's patched Vulkan build on llvmpipe", () => {
    let runtime: LlamaRuntime;
    let split: KvEngine;
    let unified: KvEngine;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: "vulkan" });
        split = await startTinyEngine(runtime, { flashAttention: true });
        unified = await startTinyEngine(runtime, { flashAttention: true, mode: "unified" });
    });
    afterAll(async () => {
        await split?.dispose();
        await unified?.dispose();
        await runtime?.dispose();
    });

    it("is the binary the engine loads for --gpu vulkan, and the backend line says so, with no slower path", async () => {
        console.log(`backend line: ${runtime.describe()}`);
        expect(runtime.binary).toEqual({ kind: "localBuild", flavor: "patched-prebuilt" });
        expect(runtime.binaryName).toBe("patched prebuilt");
        expect(runtime.describe()).toMatch(/^vulkan, patched prebuilt, llvmpipe .* \(cpu device\)$/);
        const compute = await runtime.report(split.model);
        expect(compute).toMatchObject({ backend: "vulkan", binary: "patched prebuilt" });
        expect(compute).not.toHaveProperty("slowerPath");
        expect(compute.layers.numOnDevice).toBe(compute.layers.numTotal);
    });

    it("hands a prompt off through memory, and decodes what unified mode decodes", async () => {
        expect(split.stateExchange.kind).toBe("memory");
        for (const numPromptTokens of [17, 100]) {
            const prompt = promptOf(split, numPromptTokens);
            // fresh workspaces: nothing of an earlier prompt to reuse, so every position is handed off
            const handedOff = await split.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
            const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
            expect(handedOff.numHandedOffTokens).toBe(numPromptTokens - 1);
            expect(handedOff.tokens.length).toBeGreaterThan(0);
            expect(handedOff.tokens).toEqual(reference.tokens);
        }
        await expectEngineClean(split);
        await expectEngineClean(unified);
    });

    it("puts every role's KV in device memory, as the page map and the meters say", () => {
        for (const engine of [split, unified]) {
            expect(snapshotRoles(engine).map((role) => [role.role, role.kvMemory.where])).toEqual(
                engine === split
                    ? [
                          ["prefill", "device"],
                          ["decode", "device"]
                      ]
                    : [["unified", "device"]]
            );
        }
    });

    it("gives a context its own ggml thread pool, reaching the CPU backend the prebuilt loads at run time", async () => {
        const model = await runtime.loadModel(generatedModelPath("tiny"));
        const context = await model.createContext({ contextSize: 256, sequences: 1 });
        try {
            const pool = await attachThreadpool(context, 50);
            expect(pool).toEqual({ numThreads: context.currentThreads, poll: 50 });
            expect(pool!.numThreads).toBeGreaterThan(0);
        } finally {
            await context.dispose();
            await model.dispose();
        }
    });
});

describe("node-llama-cpp's prebuilt Vulkan binary, asked for by name", () => {
    it("runs, and its backend line says it is the slower path and why", async () => {
        const prebuilt = await LlamaRuntime.start({ gpu: "vulkan", preferLocalBuild: false });
        try {
            expect(prebuilt.binary).toEqual({ kind: "prebuilt" });
            expect(prebuilt.describe()).toMatch(
                /^vulkan, prebuilt, llvmpipe .* \(slower path: node-llama-cpp's prebuilt without Kvault's patch, states through files, decode on libuv's pool; Kvault's builds are turned off for this engine \(llamaBinary: prebuilt\)\)$/
            );
        } finally {
            await prebuilt.dispose();
        }
    });
});
