// resourceUse on a real engine (a generated model, node-llama-cpp on the CPU, or the Vulkan device in the gpu project): the figures the
// status bar shows, as the engine process's method table answers them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineMethods } from "../../../engine/process/engineMethods.js";
import type { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { startTestRuntime } from "../../support/testRuntime.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

describe("resourceUse", () => {
    let runtime: LlamaRuntime;
    beforeAll(async () => {
        runtime = await startTestRuntime();
    });
    afterAll(async () => {
        await runtime.dispose();
    });

    it("counts the tokens a workspace generated, its KV in the decode context, and this process's RAM", async () => {
        const service = await EngineService.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig }, { runtime });
        try {
            const methods = engineMethods(service);
            const idle = await methods.resourceUse({});
            expect(idle.workspaces).toEqual([]);
            if (runtime.backend === "cpu") {
                expect(idle.vram, "the CPU has no VRAM to report").toBeUndefined();
            } else {
                // the device's memory as node-llama-cpp measures it (llvmpipe reports its size, and 0 used)
                expect(idle.vram?.totalBytes, "a GPU reports its memory").toBeGreaterThan(0);
                expect(idle.vram?.usedBytes).toBeGreaterThanOrEqual(0);
            }
            expect(idle.process.pid).toBe(process.pid);
            expect(idle.process.rssBytes).toBeGreaterThan(idle.process.heapUsedBytes);

            const result = await service.chat({
                requestId: "r1",
                workspace: "alice",
                messages: [{ role: "user", content: "Tell me about pages." }],
                sampling: { temperature: 0, maxTokens: 40 }
            });
            const use = await methods.resourceUse({});
            const alice = use.workspaces.find((rate) => rate.workspace === "alice");
            expect(alice?.tokensPerSecond).toBeGreaterThan(0);
            expect(use.tokensPerSecond).toBe(alice?.tokensPerSecond);

            const snapshot = service.snapshot();
            const decode = use.kv.find((role) => role.role === "decode")!;
            const held = snapshot.sequences
                .filter((sequence) => sequence.role === "decode")
                .reduce((sum, sequence) => sum + sequence.numTokens, 0);
            expect(held).toBeGreaterThanOrEqual(result.usage.completionTokens);
            expect(decode.usedBytes).toBe(held * snapshot.bytesPerToken);
            const role = snapshot.roles.find((candidate) => candidate.role === "decode")!;
            expect(role.numSequences).toBe(tinyEngineConfig.numDecodeSequences);
            expect(decode.reservedBytes).toBe(role.numSequences * role.sequenceCapacity * snapshot.bytesPerToken);
            await expectEngineClean(service.engine);
        } finally {
            await service.dispose();
        }
    });
});
