import { describe, expect, it } from "vitest";
import {
    fitVerdict,
    kvBytesPerToken,
    type CatalogueModelView,
    type CatalogueQuant,
    type MachineMemory
} from "../../../../contract/modelCatalogue.js";
import { DEMO_MODEL_NAME, isDemoModel, smallestFittingFile } from "../../../../renderer/chat/demoModelSelectors.js";

const GB = 1_000_000_000;
const architecture = { numLayers: 28, numKvHeads: 8, headSize: 128, trainContextSize: 40_960 };

/** Catalogue models with the host's verdicts for a machine with `freeRamBytes` free and a 512-token context. */
function models(freeRamBytes: number, files: Readonly<Record<string, readonly [CatalogueQuant, string, number][]>>): CatalogueModelView[] {
    const machine: MachineMemory = { freeRamBytes, totalRamBytes: 64 * GB };
    return Object.entries(files).map(([repo, repoFiles]) => ({
        id: repo,
        name: repo,
        family: "test",
        parameters: "1B",
        repo,
        architecture,
        files: repoFiles.map(([quant, fileName, sizeBytes]) => ({
            quant,
            fileName,
            sizeBytes,
            downloadSource: `https://huggingface.co/${repo}/resolve/main/${fileName}`,
            fit: fitVerdict({
                weightsBytes: sizeBytes,
                kvBytesPerToken: kvBytesPerToken(architecture),
                contextSize: 512,
                basis: "catalogue",
                machine
            })
        }))
    }));
}

// Sizes as the catalogue records them (host/models/catalogue/catalogueEntries.ts), listed largest model first.
const catalogueFiles = {
    "bartowski/Llama-3.2-1B-Instruct-GGUF": [
        ["Q8_0", "Llama-3.2-1B-Instruct-Q8_0.gguf", 1_321_083_008],
        ["Q4_K_M", "Llama-3.2-1B-Instruct-Q4_K_M.gguf", 807_694_464]
    ],
    "unsloth/Qwen3-0.6B-GGUF": [
        ["Q4_K_M", "Qwen3-0.6B-Q4_K_M.gguf", 396_705_472],
        ["Q8_0", "Qwen3-0.6B-Q8_0.gguf", 639_446_688]
    ]
} as const satisfies Record<string, readonly [CatalogueQuant, string, number][]>;

describe("the demo model's note", () => {
    it("shows for the engine's built-in demo model only, by the name its generator writes", () => {
        expect(DEMO_MODEL_NAME).toBe("Kvault synthetic tiny");
        expect(isDemoModel({ modelName: "Kvault synthetic tiny" })).toBe(true);
        // A real model, the other generated preset (--model small), the demo's file name and no engine yet: no note.
        expect(isDemoModel({ modelName: "Qwen3-0.6B" })).toBe(false);
        expect(isDemoModel({ modelName: "Kvault synthetic small" })).toBe(false);
        expect(isDemoModel({ modelName: "tiny-v3" })).toBe(false);
        expect(isDemoModel(undefined)).toBe(false);
    });

    it("offers the smallest file that fits: Qwen3 0.6B Q4_K_M (396,705,472 bytes) with 64 GB free, wherever it is listed", () => {
        const choice = smallestFittingFile({ models: models(64 * GB, catalogueFiles) });
        expect(choice?.file.fileName).toBe("Qwen3-0.6B-Q4_K_M.gguf");
        expect(choice?.file.sizeBytes).toBe(396_705_472);
        expect(choice?.model.repo).toBe("unsloth/Qwen3-0.6B-GGUF");
        expect(choice?.file.fit.kind).toBe("ram");
    });

    it("skips a smaller file whose verdict is too big, and offers nothing when no file fits", () => {
        // The host read the 0.6B files' headers and found them too big: the next smallest file, Llama 3.2 1B Q4_K_M, is offered.
        const tooBig = fitVerdict({
            weightsBytes: 100 * GB,
            kvBytesPerToken: 0,
            contextSize: 512,
            basis: "header",
            machine: { freeRamBytes: GB, totalRamBytes: GB }
        });
        const view = models(64 * GB, catalogueFiles).map((model) =>
            model.repo === "unsloth/Qwen3-0.6B-GGUF" ? { ...model, files: model.files.map((file) => ({ ...file, fit: tooBig })) } : model
        );
        expect(smallestFittingFile({ models: view })?.file.fileName).toBe("Llama-3.2-1B-Instruct-Q4_K_M.gguf");
        // 0.1 GB free: not even the 0.6B Q4_K_M's 0.4 GB fits.
        expect(smallestFittingFile({ models: models(0.1 * GB, catalogueFiles) })).toBeUndefined();
        expect(smallestFittingFile({ models: [] })).toBeUndefined();
    });
});
