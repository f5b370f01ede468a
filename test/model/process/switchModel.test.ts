import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectModelInChild } from "../../../host/models/inspectModelInChild.js";
import { EngineSupervisor } from "../../../host/supervisor/EngineSupervisor.js";
import { generatedModelPath, repositoryRoot } from "../../support/generatedModels.js";
import { Conversation, RecordingSpawner, tinyProcessConfig } from "./supervisorFixtures.js";

describe("switching models behind the supervisor, with real engine processes", () => {
    let supervisor: EngineSupervisor;
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-switch-"));
    /** Runs after the real inspection of a switch's file, before the switch ends the running turns. */
    let afterInspection: (() => Promise<void>) | undefined;

    beforeAll(async () => {
        supervisor = await EngineSupervisor.start(tinyProcessConfig, {
            spawner: new RecordingSpawner({ quiet: true }),
            log: () => undefined,
            inspectModel: async (modelPath, options) => {
                const facts = await inspectModelInChild(modelPath, options);
                await afterInspection?.();
                return facts;
            }
        });
    }, 120_000);
    afterAll(async () => {
        await supervisor?.dispose();
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it("refuses a file that is not GGUF, and a truncated one, leaving the running engine untouched", async () => {
        const pid = supervisor.pid;
        const before = supervisor.info;
        await expect(supervisor.switchModel(path.join(repositoryRoot, "package.json"))).rejects.toMatchObject({ code: "model_not_gguf" });
        const truncated = path.join(scratch, "truncated.gguf");
        fs.writeFileSync(truncated, fs.readFileSync(generatedModelPath("tiny")).subarray(0, 100));
        await expect(supervisor.switchModel(truncated)).rejects.toMatchObject({ code: "model_unreadable" });
        expect(supervisor.pid).toBe(pid);
        expect(supervisor.info).toBe(before);
        expect(supervisor.state).toBe("running");
        const result = await new Conversation("alice").turn(supervisor, "Are you still there?");
        expect(result.usage.completionTokens).toBeGreaterThan(0);
    }, 120_000);

    it("switches tiny → small: a running turn ends with model_switched, info names the new model, and the next chat works", async () => {
        const before = supervisor.info;
        const oldPid = supervisor.pid;
        const conversation = new Conversation("bob");
        // The turn starts once the new file is inspected (which takes seconds, in a child process) and
        // the switch goes on at its first token, so it is still generating when the switch reaches it.
        let running: Promise<(Error & { code?: string }) | undefined> | undefined;
        afterInspection = async () => {
            afterInspection = undefined;
            let firstText!: () => void;
            const generating = new Promise<void>((resolve) => {
                firstText = resolve;
            });
            running = supervisor
                .chat(conversation.request("Tell me a long story", { temperature: 0, maxTokens: 200 }), (event) => {
                    if (event.type === "text") {
                        firstText();
                    }
                })
                .then(
                    () => undefined,
                    (error: unknown) => error as Error & { code?: string }
                );
            await generating;
        };
        const info = await supervisor.switchModel(generatedModelPath("small"));
        expect(running, "the turn started between the inspection and the switch").toBeDefined();
        const error = await running;
        expect(error?.code).toBe("model_switched");
        expect(error?.message).toMatch(/^The model was switched to .+ while this turn ran; send the message again\.$/);
        expect(info.modelPath).toBe(generatedModelPath("small"));
        expect(info.modelName).not.toBe(before.modelName);
        expect(supervisor.info).toBe(info);
        expect(supervisor.pid).not.toBe(oldPid);
        expect(supervisor.numRestarts).toBe(0);
        const result = await conversation.turn(supervisor, "Hello again");
        expect(result.usage.completionTokens).toBeGreaterThan(0);
    }, 180_000);
});
