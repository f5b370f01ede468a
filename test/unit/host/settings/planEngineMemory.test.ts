import { describe, expect, it } from "vitest";
import type { EngineSettings } from "../../../../contract/settings.js";
import { engineSettingDefaults } from "../../../../host/settings/KvaultSettings.js";
import {
    planEngineMemory,
    readableBytes,
    type EngineMemoryInput,
    type PlanModelFacts
} from "../../../../host/settings/planEngineMemory.js";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** A model of 2 GiB whose token's K and V take 128 KiB in F16 (a 7B-ish GQA model), half and a quarter-ish in Q8_0/Q4_0. */
const facts: PlanModelFacts = {
    fileBytes: 2 * GiB,
    kvBytesPerTokenByType: { f16: 131_072, q8_0: 69_632, q4_0: 36_864 },
    memory: { plainKvCache: true },
    trainContextSize: 32_768,
    heads: { numHeads: 32, numKvHeads: 8, kHeadSize: 128, vHeadSize: 128 },
    numLayers: 31 // node-llama-cpp offloads these and the output layer: 32 in all
};

const running: EngineSettings = { ...engineSettingDefaults, contextSize: 4096, decodeSequences: 4, pageTokens: 256 };

function plan(change: Partial<EngineSettings>, machine: Partial<EngineMemoryInput["machine"]> = {}, rest: Partial<EngineMemoryInput> = {}) {
    return planEngineMemory({
        settings: { ...running, ...change },
        running,
        facts,
        machine: { freeRamBytes: 16 * GiB, freeVramBytes: null, ...machine },
        mode: "split",
        gpuBackend: false,
        numRunningTurns: 0,
        ...rest
    });
}

describe("planEngineMemory", () => {
    it("counts window × decode sequences × KV bytes per token of the type, the prefill context, the pool and the weights", () => {
        const result = plan({ contextSize: 8192 });
        expect(result.memory.map(({ what, bytes, where }) => ({ what, bytes, where }))).toEqual([
            { what: "weights", bytes: 2 * GiB, where: "ram" },
            { what: "decodeKv", bytes: 8192 * 4 * 131_072, where: "ram" }, // 4 GiB
            { what: "prefillKv", bytes: 8192 * 4 * 131_072, where: "ram" },
            // a full window for every decode sequence plus one: 32 pages × 5, of 256 tokens each
            { what: "pagePool", bytes: 160 * 256 * 131_072, where: "ram" }
        ]);
        expect(result.ramNeededBytes).toBe(2 * GiB + 4 * GiB + 4 * GiB + 5 * GiB);
        expect(result.memory[1]!.label).toBe("KV of the decode context: 8,192 tokens × 4 sequences × 131,072 bytes (F16)");
        expect(result.changed).toEqual(["contextSize"]);
        expect(result.restart).toBe("The engine restarts on the same model; no turn is running.");
    });

    it("follows the KV cache type: Q8_0 keeps a token in 69,632 bytes, so the same window takes about half", () => {
        const f16 = plan({});
        const q8 = plan({ kvCacheType: "q8_0" });
        expect(q8.memory.find((line) => line.what === "decodeKv")!.bytes).toBe(4096 * 4 * 69_632);
        expect(q8.ramNeededBytes - 2 * GiB).toBe(((f16.ramNeededBytes - 2 * GiB) / 131_072) * 69_632);
    });

    it("counts the running engine's memory as available, since the restart gives it back", () => {
        const result = plan({}, { freeRamBytes: 1 * GiB });
        expect(result.ramAvailableBytes).toBe(1 * GiB + result.ramNeededBytes); // the same settings: what runs is what it needs
        expect(result.fits).toBe(true);
        expect(result.changed).toEqual([]);
        expect(result.restart).toBeNull();
    });

    it("refuses a plan that cannot fit, with the numbers and the largest context size that would", () => {
        // Running takes 2 + 2 + 2 + 2.5 = 8.5 GiB; 1.5 GiB more is free: 10 GiB for the engine.
        const result = plan({ contextSize: 16_384 }, { freeRamBytes: 1.5 * GiB });
        expect(result.fits).toBe(false);
        expect(result.ramNeededBytes).toBe(2 * GiB + 8 * GiB + 8 * GiB + 10 * GiB);
        expect(result.problems).toEqual([
            "These settings need 28 GiB of RAM, and this machine has 10 GiB for the engine (1.5 GiB free now, plus 8.5 GiB the running engine gives back): " +
                // 8 GiB for the window, at 1,664 KiB a token of it (512 decode, 512 prefill, 5 × 128 pool): 4,864 tokens in 256-token steps
                "18 GiB too much. Lower the context size to at most 4,864 tokens, or use fewer decode sequences (4 now), or the KV cache type q8_0 (about half the KV bytes)."
        ]);
        // the remedy fits: 4,864 tokens do, the next page-sized step does not
        expect(plan({ contextSize: 4864 }, { freeRamBytes: 1.5 * GiB }).fits).toBe(true);
        expect(plan({ contextSize: 4864 + 256 }, { freeRamBytes: 1.5 * GiB }).fits).toBe(false);
    });

    it("puts the weights and contexts on the GPU with offload and a GPU backend, the pool in RAM, and says VRAM is not measured", () => {
        const result = plan({}, {}, { gpuBackend: true });
        expect(result.memory.map(({ what, where }) => `${what}:${where}`)).toEqual([
            "weights:vram",
            "decodeKv:vram",
            "prefillKv:vram",
            "pagePool:ram"
        ]);
        expect(result.vramNeededBytes).toBe(2 * GiB + 2 * GiB + 2 * GiB);
        expect(result.ramNeededBytes).toBe(2.5 * GiB);
        expect(result.vramAvailableBytes).toBeNull();
        expect(result.notes).toEqual(["6 GiB go to the GPU, whose free memory Kvault does not measure here."]);
        // Known free VRAM is checked as RAM is.
        const tight = plan({ contextSize: 8192 }, { freeVramBytes: 1 * GiB }, { gpuBackend: true });
        expect(tight.fits).toBe(false);
        expect(tight.problems[0]).toMatch(
            /^These settings need 10 GiB of GPU memory, and the GPU has 7 GiB for the engine: 3 GiB too much\. .* Or turn GPU offload off\.$/
        );
        // GPU offload off: everything in RAM, whatever the backend.
        expect(plan({ gpu: "off" }, {}, { gpuBackend: true }).vramNeededBytes).toBe(0);
    });

    it("puts a number of GPU layers' share of the weights and contexts on the GPU, the rest in RAM", () => {
        const result = plan({ gpuLayers: 8 }, {}, { gpuBackend: true }); // 8 of 32 layers: a quarter
        expect(result.memory.map(({ what, where, bytes }) => `${what}:${where}:${bytes / MiB}`)).toEqual([
            "weights:vram:512",
            "weights:ram:1536",
            "decodeKv:vram:512",
            "decodeKv:ram:1536",
            "prefillKv:vram:512",
            "prefillKv:ram:1536",
            "pagePool:ram:2560"
        ]);
        expect(result.memory[0]!.label).toBe("Model weights (the file's size), on the GPU");
        expect(result.vramNeededBytes).toBe(1.5 * GiB);
        expect(result.ramNeededBytes).toBe(4.5 * GiB + 2.5 * GiB);
        expect(result.changed).toEqual(["gpuLayers"]);
        expect(result.fits).toBe(true);
        // A named backend with a number of layers: that share on its device, even where "auto" would find no GPU.
        const named = plan({ gpu: "vulkan", gpuLayers: 8 });
        expect(named.vramNeededBytes).toBe(1.5 * GiB);
        expect(named.changed).toEqual(["gpu", "gpuLayers"]);
        expect(named.notes.filter((note) => note.startsWith("No GPU"))).toEqual([]);
        // All 32 are all of it; 0 layers keep everything in RAM.
        expect(plan({ gpuLayers: 32 }, {}, { gpuBackend: true }).vramNeededBytes).toBe(6 * GiB);
        expect(plan({ gpuLayers: 0 }, {}, { gpuBackend: true }).vramNeededBytes).toBe(0);
    });

    it("refuses more GPU layers than the model has, naming both numbers, before anything restarts", () => {
        const result = plan({ gpuLayers: 33 }, {}, { gpuBackend: true });
        expect(result.fits).toBe(false);
        expect(result.problems).toEqual([
            'GPU layers is 33, but this model has 31 layers and an output layer (32 in all). Give 0 to 32, or "auto" for all that fit.'
        ]);
        expect(plan({ gpuLayers: 33 }).fits).toBe(false); // on the CPU too: the number is wrong for this model either way
    });

    it("says a number of layers stays on the CPU when there is no GPU, and loads there", () => {
        const result = plan({ gpuLayers: 12 });
        expect(result.fits).toBe(true);
        expect(result.vramNeededBytes).toBe(0);
        expect(result.notes).toEqual([
            "No GPU: layers stay on the CPU. The engine runs on the CPU alone, so node-llama-cpp keeps all 32 layers there, whatever the number."
        ]);
    });

    it("has no prefill context in unified mode", () => {
        expect(plan({}, {}, { mode: "unified" }).memory.map((line) => line.what)).toEqual(["weights", "decodeKv", "pagePool"]);
    });

    it("refuses a quantized type without flash attention, and a type the model's heads do not fit", () => {
        expect(plan({ kvCacheType: "q4_0", flashAttention: false }).problems).toEqual([
            "The KV cache type Q4_0 needs flash attention, which is off: llama.cpp keeps V transposed without it. Turn flash attention on, or use f16."
        ]);
        const odd = planEngineMemory({
            settings: { ...running, kvCacheType: "q8_0" },
            running,
            facts: {
                ...facts,
                kvBytesPerTokenByType: { f16: 131_072, q8_0: undefined, q4_0: undefined },
                heads: { numHeads: 32, numKvHeads: 8, kHeadSize: 80, vHeadSize: 80 }
            },
            machine: { freeRamBytes: 64 * GiB, freeVramBytes: null },
            mode: "split",
            gpuBackend: false,
            numRunningTurns: 2
        });
        expect(odd.fits).toBe(false);
        expect(odd.problems).toEqual([
            "This model's heads (K 80, V 80 values) are not a whole number of 32-value blocks, so the KV cache cannot be kept in Q8_0. Use f16."
        ]);
        expect(odd.restart).toBe(
            "The engine restarts on the same model; 2 running turns end with engine_settings_changed (send again after)."
        );
    });

    it("notes a window above the model's training context, and a model that runs unified", () => {
        const result = planEngineMemory({
            settings: { ...running, contextSize: 65_536 },
            running,
            facts: { ...facts, memory: { plainKvCache: false, reason: "its sliding-window layers keep only the last 4,096 positions." } },
            machine: { freeRamBytes: 1024 * GiB, freeVramBytes: null },
            mode: "unified",
            gpuBackend: false,
            numRunningTurns: 0
        });
        expect(result.fits).toBe(true);
        expect(result.notes).toEqual([
            "The context size (65,536 tokens) is above the 32,768 the model was trained with; answers past that may degrade.",
            "This model runs unified (no prefill context, no handoff): its sliding-window layers keep only the last 4,096 positions."
        ]);
    });
});

describe("readableBytes", () => {
    it("says bytes in the unit a person reads", () => {
        expect(readableBytes(512)).toBe("512 bytes");
        expect(readableBytes(1536)).toBe("1.5 KiB");
        expect(readableBytes(640 * MiB)).toBe("640 MiB");
        expect(readableBytes(10.25 * GiB)).toBe("10.3 GiB");
    });
});

describe("planEngineMemory: the backend", () => {
    it("plans a named backend's model on its device, against the device's free memory, even while auto finds no GPU", () => {
        const result = plan({ gpu: "vulkan" }, { freeVramBytes: 1 * GiB }, { gpuBackend: false });
        expect(result.memory.filter((line) => line.where === "vram").map((line) => line.what)).toEqual([
            "weights",
            "decodeKv",
            "prefillKv"
        ]);
        expect(result.vramNeededBytes).toBe(2 * GiB + 2 * 4096 * 4 * 131_072);
        expect(result.fits).toBe(false);
        expect(result.problems[0]).toMatch(
            /^These settings need 6 GiB of GPU memory, and the GPU has 1 GiB for the engine: 5 GiB too much\./
        );
    });
});

describe("planEngineMemory: a draft model", () => {
    const draftFacts: PlanModelFacts = { ...facts, fileBytes: 512 * MiB, kvBytesPerTokenByType: { f16: 16_384, q8_0: 8_704, q4_0: 4_608 } };

    it("counts the draft model's weights and its F16 KV for every decode sequence, where the model goes", () => {
        const result = plan({ speculation: "draft-model", draftModel: "/m/d.gguf" }, {}, { draft: { facts: draftFacts } });
        expect(result.memory.filter((line) => line.what.startsWith("draft"))).toEqual([
            { what: "draftWeights", label: "Draft model weights (the file's size)", bytes: 512 * MiB, where: "ram" },
            {
                what: "draftKv",
                label: "KV of the draft model: 4,096 tokens × 4 sequences × 16,384 bytes (F16)",
                bytes: 4096 * 4 * 16_384,
                where: "ram"
            }
        ]);
        const without = plan({});
        expect(result.ramNeededBytes - without.ramNeededBytes).toBe(512 * MiB + 4096 * 4 * 16_384);
        expect(result.changed).toEqual(["speculation", "draftModel"]);
        const onGpu = plan({ speculation: "draft-model", draftModel: "/m/d.gguf" }, {}, { draft: { facts: draftFacts }, gpuBackend: true });
        expect(onGpu.memory.filter((line) => line.what.startsWith("draft")).map((line) => line.where)).toEqual(["vram", "vram"]);
    });

    it("refuses a draft model whose file cannot serve, with why; a path changed while it is off restarts nothing", () => {
        const refused = plan(
            { speculation: "draft-model", draftModel: "/m/d.gguf" },
            {},
            { draft: { problem: "The draft model /m/d.gguf cannot be used: no such file." } }
        );
        expect(refused.fits).toBe(false);
        expect(refused.problems).toEqual(["The draft model /m/d.gguf cannot be used: no such file."]);
        const pathOnly = plan({ draftModel: "/m/d.gguf", draftMaxTokens: 4, draftMinConfidence: 0 });
        expect(pathOnly.changed).toEqual([]);
        const withDraft = { ...running, speculation: "draft-model" as const, draftModel: "/m/d.gguf" };
        expect(
            planEngineMemory({
                settings: { ...withDraft, draftMaxTokens: 4 },
                running: withDraft,
                facts,
                draft: { facts: draftFacts },
                machine: { freeRamBytes: 16 * GiB, freeVramBytes: null },
                mode: "split",
                gpuBackend: false,
                numRunningTurns: 0
            }).changed
        ).toEqual(["draftMaxTokens"]);
        expect(pathOnly.memory.some((line) => line.what.startsWith("draft"))).toBe(false);
    });
});
