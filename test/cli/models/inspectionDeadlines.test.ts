import path from "node:path";
import { describe, expect, it } from "vitest";
import { forkInspectionSpawner, type InspectionSpawner } from "../../../host/models/inspectionProcess.js";
import { childInspector } from "../../../host/models/inspectModelInChild.js";
import { repositoryRoot } from "../../support/generatedModels.js";

const entry = path.join(repositoryRoot, "test/cli/models/inspectionChildMain.ts");
const modelPath = path.join(repositoryRoot, "model.gguf");
const estimateFor = { contextSize: 512, sequences: 1 };

/** The real fork of the test's inspection process, told how to behave. */
function spawnBehaving(mode: "slowStart" | "hangsReading" | "neverStarts"): InspectionSpawner {
    const fork = forkInspectionSpawner(entry);
    return (launch) => fork({ ...launch, env: { ...launch.env, KVAULT_TEST_INSPECTION: mode } });
}

async function refusal(inspection: Promise<unknown>): Promise<{ code: string; name: string; message: string }> {
    const error: unknown = await inspection.then(
        () => undefined,
        (caught: unknown) => caught
    );
    expect(error, "the inspection should be refused").toBeInstanceOf(Error);
    return error as { code: string; name: string; message: string };
}

describe("the inspection process's read deadline starts when it is ready, not when it is started", () => {
    it("a process slower to start than the read deadline still answers", async () => {
        const inspect = childInspector({ spawn: spawnBehaving("slowStart"), limits: { deadlineMs: 1_000 } });
        await expect(inspect(modelPath, estimateFor)).resolves.toMatchObject({ path: modelPath, architecture: "llama" });
    });

    it("a process that hangs reading is still stopped by the read deadline: model_unreadable", async () => {
        const inspect = childInspector({ spawn: spawnBehaving("hangsReading"), limits: { deadlineMs: 1_000 } });
        const error = await refusal(inspect(modelPath, estimateFor));
        expect(error.code).toBe("model_unreadable");
        expect(error.message).toBe(
            `Reading the header of ${modelPath} took more than 1 s, so Kvault stopped it: a model's header takes well under a second, ` +
                "so the file is probably damaged or crafted (or its disk is very slow). It was not loaded."
        );
    });

    it("a process that never gets ready is stopped by the start-up bound, which does not blame the file", async () => {
        const inspect = childInspector({ spawn: spawnBehaving("neverStarts"), limits: { startupMs: 2_000, deadlineMs: 1_000 } });
        const error = await refusal(inspect(modelPath, estimateFor));
        expect(error).toMatchObject({ name: "InspectionStartTimeoutError", code: "model_unreadable" });
        expect(error.message).toBe(
            `The process that inspects model files did not start within 2 s, so ${modelPath} was not read: ` +
                "the machine is probably very busy. Nothing is wrong with the file as far as Kvault knows; try again."
        );
    });
});
