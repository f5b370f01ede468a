import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { forkInspectionSpawner } from "../../../../host/models/inspectionProcess.js";
import { inspectModelFile } from "../../../../host/models/inspectModelFile.js";
import { childInspector, inspectModelInChild } from "../../../../host/models/inspectModelInChild.js";
import { ensureGeneratedModel, repositoryRoot } from "../../../support/generatedModels.js";
import { craftedRefusal, writeCraftedGguf } from "./craftedGgufFiles.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-inspect-child-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function refusal(inspection: Promise<unknown>): Promise<{ code: string; message: string }> {
    const error: unknown = await inspection.then(
        () => undefined,
        (caught: unknown) => caught
    );
    expect(error, "the inspection should be refused").toBeInstanceOf(Error);
    return error as { code: string; message: string };
}

describe("inspectModelInChild: model files read in a child process with a memory limit and a deadline", () => {
    it("gives the same facts as inspectModelFile in this process, for the tiny and the small model", async () => {
        for (const preset of ["tiny", "small"] as const) {
            const modelPath = ensureGeneratedModel(preset);
            expect(await inspectModelInChild(modelPath, { contextSize: 2048, sequences: 4 })).toEqual(
                await inspectModelFile(modelPath, { contextSize: 2048, sequences: 4 })
            );
        }
    });

    it("refuses the crafted files that took the host down, with Kvault's reader's numbers, and keeps the typed refusals", async () => {
        for (const name of ["hugeArray", "hugeHeader"] as const) {
            const filePath = writeCraftedGguf(scratch, name);
            expect(await refusal(inspectModelInChild(filePath, { contextSize: 512, sequences: 1 }))).toMatchObject({
                code: "model_unreadable",
                message: craftedRefusal(filePath, name)
            });
        }
        expect(
            await refusal(inspectModelInChild(path.join(repositoryRoot, "package.json"), { contextSize: 512, sequences: 1 }))
        ).toMatchObject({
            code: "model_not_gguf",
            message: expect.stringContaining('package.json is not a GGUF file (it starts with "{\\n  "')
        });
    });

    describe("contains an unforeseen reader bug: node-llama-cpp's reader alone, in the inspection process", () => {
        const inspect = childInspector({
            spawn: forkInspectionSpawner(path.join(repositoryRoot, "test/model/host/models/rawReaderInspection.ts")),
            limits: { maxHeapMb: 128, maxRssBytes: 384 * 1024 * 1024, deadlineMs: 15_000 }
        });

        it("the 2^40-element array ends that process, not this one: model_unreadable, saying so", async () => {
            const filePath = writeCraftedGguf(scratch, "hugeArray");
            const error = await refusal(inspect(filePath, { contextSize: 512, sequences: 1 }));
            expect(error.code).toBe("model_unreadable");
            expect(error.message).toMatch(
                new RegExp(
                    `^Reading the header of ${filePath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} (ended the process that inspects model files|used \\d+ MB of)`
                )
            );
            expect(error.message).toMatch(/the file is probably damaged or crafted\. It was not loaded/);
        });

        it("the 2^62-entry header, which never answers and keeps allocating, is stopped: model_unreadable", async () => {
            const filePath = writeCraftedGguf(scratch, "hugeHeader");
            const error = await refusal(inspect(filePath, { contextSize: 512, sequences: 1 }));
            expect(error.code).toBe("model_unreadable");
            expect(error.message).toMatch(
                /^Reading the header of .*hugeHeader\.gguf (used \d+ MB of|took more than 15 s|ended the process)/
            );
            // This process did not pay for it.
            expect(process.memoryUsage.rss()).toBeLessThan(2 * 1024 ** 3);
        });

        it("a good file still reads through the same process", async () => {
            await expect(inspect(ensureGeneratedModel("tiny"), { contextSize: 512, sequences: 1 })).resolves.toMatchObject({
                architecture: "llama",
                numLayers: 21
            });
        });
    });
});
