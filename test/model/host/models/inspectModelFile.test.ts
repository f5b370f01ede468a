import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inspectModelFile } from "../../../../host/models/inspectModelFile.js";
import { ensureGeneratedModel, repositoryRoot } from "../../../support/generatedModels.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-inspect-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function inspectError(modelPath: string): Promise<{ code: string; message: string }> {
    const error: unknown = await inspectModelFile(modelPath).then(
        () => undefined,
        (caught: unknown) => caught
    );
    expect(error, `inspecting ${modelPath} should fail`).toBeInstanceOf(Error);
    return error as { code: string; message: string };
}

describe("inspectModelFile on generated GGUFs and on files that are not models", () => {
    it("reads the tiny model's facts and a memory estimate without loading it", async () => {
        const modelPath = ensureGeneratedModel("tiny");
        const facts = await inspectModelFile(modelPath, { contextSize: 2048, sequences: 4 });
        expect(facts.path).toBe(modelPath);
        expect(facts.fileName).toBe(path.basename(modelPath));
        expect(facts.fileBytes).toBe(fs.statSync(modelPath).size);
        expect(facts.architecture).toBe("llama");
        expect(facts.fileType).toBe("MOSTLY_F16");
        expect(facts.numLayers).toBeGreaterThan(0);
        expect(facts.kvBytesPerToken).toBeGreaterThan(0);
        expect(facts.kvBytesPerToken % (facts.numLayers * 2 * 2)).toBe(0); // layers × (K + V) × 2 bytes
        expect(facts.memory).toEqual({ plainKvCache: true });
        expect(facts.estimate).toBeDefined();
        expect(facts.estimate!.contextSize).toBe(2048);
        expect(facts.estimate!.sequences).toBe(4);
        expect(facts.estimate!.kvCacheBytes).toBe(facts.kvBytesPerToken * 2048 * 4);
        expect(facts.estimate!.cpu.ramBytes).toBeGreaterThan(0);
    });

    it("sees the small model as bigger than the tiny one", async () => {
        const tiny = await inspectModelFile(ensureGeneratedModel("tiny"));
        const small = await inspectModelFile(ensureGeneratedModel("small"));
        expect(small.fileBytes).toBeGreaterThan(tiny.fileBytes);
        expect(small.kvBytesPerToken).toBeGreaterThanOrEqual(tiny.kvBytesPerToken);
    });

    it("refuses a text file: model_not_gguf, saying what it starts with", async () => {
        const error = await inspectError(path.join(repositoryRoot, "package.json"));
        expect(error.code).toBe("model_not_gguf");
        expect(error.message).toContain(
            'package.json is not a GGUF file (it starts with "{\\n  "; a GGUF file starts with "GGUF"). Open a .gguf model file.'
        );
    });

    it("refuses an empty file as not GGUF", async () => {
        const empty = path.join(scratch, "empty.gguf");
        fs.writeFileSync(empty, "");
        const error = await inspectError(empty);
        expect(error.code).toBe("model_not_gguf");
        expect(error.message).toMatch(/it is empty/);
    });

    it("refuses a truncated GGUF (its first 100 bytes): model_unreadable, truncated or damaged", async () => {
        const truncated = path.join(scratch, "truncated.gguf");
        fs.writeFileSync(truncated, fs.readFileSync(ensureGeneratedModel("tiny")).subarray(0, 100));
        const error = await inspectError(truncated);
        expect(error.code).toBe("model_unreadable");
        expect(error.message).toMatch(/starts like a GGUF file, but its header could not be read .*truncated or damaged/);
    });

    it("refuses a missing path and a directory: model_unreadable", async () => {
        const missing = await inspectError(path.join(scratch, "nothing-here.gguf"));
        expect(missing.code).toBe("model_unreadable");
        expect(missing.message).toMatch(/Cannot open the model .*nothing-here\.gguf: no such file\. Give the full path/);
        const directory = await inspectError(scratch);
        expect(directory.code).toBe("model_unreadable");
        expect(directory.message).toMatch(/is not a file/);
    });
});
