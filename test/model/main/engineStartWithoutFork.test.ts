// The desktop app's engine start-up path (main's startEngine → the utilityProcess spawner → the
// app's engine entry → node-llama-cpp's getLlama) in an engine process that cannot fork, as in
// the packaged app with the RunAsNode fuse off: `import("electron")` has no utilityProcess and
// child_process.fork throws (or, before electron/electron#53831, starts a second app instance).
// This test process plays Electron main: child_process.fork stands in for utilityProcess.fork,
// and node-llama-cpp's own testBindingBinary.js runs as each binding test.
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { BindingTestRelay, nodeLlamaCppBindingTestModule, type BindingTestLog } from "../../../main/engine/BindingTestRelay.js";
import { startEngine, type StartedEngine } from "../../../main/engine/startEngine.js";
import { UtilityEngineProcess } from "../../../main/engine/UtilityEngineProcess.js";
import { childInspector } from "../../../host/models/inspectModelInChild.js";
import { forkInspectionSpawner } from "../../../host/models/inspectionProcess.js";
import { forkAsUtilityProcess } from "../../support/forkAsUtilityProcess.js";
import { generatedModelPath } from "../../support/generatedModels.js";

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const appEngineEntry = fileURLToPath(new URL("../../../engine/process/appEngineProcessMain.ts", import.meta.url));
const appInspectionEntry = fileURLToPath(new URL("../../../host/models/appInspectModelProcessMain.ts", import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const engineExecArgv = ["--import", tsx, "--import", pathToFileURL(fixture("fuseOffUtilityProcess.mjs")).href];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
        await cleanup();
    }
});

async function relay(testProcessExecArgv: readonly string[] = []): Promise<BindingTestRelay> {
    const testModule = nodeLlamaCppBindingTestModule();
    expect(testModule, "node-llama-cpp's testBindingBinary.js").toBeDefined();
    const started = await BindingTestRelay.listen({
        testModule: testModule!,
        fork: forkAsUtilityProcess({ execArgv: testProcessExecArgv }),
        log: () => undefined
    });
    cleanups.push(() => started.close());
    return started;
}

/** main/index.ts's startEngine, with the engine process forked as the fuse-off app's would be. */
async function startAppEngine(
    forkBehaviour: "throws" | "second-instance",
    binaryTests: BindingTestRelay | undefined
): Promise<{ started?: StartedEngine; error?: unknown; output: string }> {
    const userData = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-userdata-"));
    cleanups.push(async () => fs.rmSync(userData, { recursive: true, force: true }));
    let output = "";
    const spawner = UtilityEngineProcess.spawner(forkAsUtilityProcess({ execArgv: engineExecArgv }), {
        entry: appEngineEntry,
        env: { ...process.env, KVAULT_TEST_FORK_WITH_FUSE_OFF: forkBehaviour, ...binaryTests?.engineEnv() },
        onOutput: (chunk) => {
            output += chunk;
        }
    });
    // The app reads the model's header in a process of its own first, which cannot fork its binary test either.
    const forkInspection = forkInspectionSpawner(appInspectionEntry);
    const inspectModel = childInspector({
        spawn: ({ env, execArgv }) =>
            forkInspection({
                env: { ...env, KVAULT_TEST_FORK_WITH_FUSE_OFF: forkBehaviour, ...binaryTests?.engineEnv() },
                execArgv: [...execArgv, "--import", pathToFileURL(fixture("fuseOffUtilityProcess.mjs")).href]
            })
    });
    try {
        const started = await startEngine({
            modelsDirectory: path.join(userData, "models"),
            libraryFile: path.join(userData, "models.json"),
            modelPath: generatedModelPath("tiny"),
            spawner,
            inspectModel,
            log: () => undefined,
            binaryTests: binaryTests satisfies BindingTestLog | undefined,
            // node-llama-cpp tests only its prebuilt binaries before loading one; a local build loads without
            engine: { llamaBinary: "prebuilt" }
        });
        cleanups.push(() => started.supervisor.dispose());
        return { started, output };
    } catch (error) {
        return { error, output };
    }
}

describe("the desktop app's engine, where child_process.fork cannot run its binary test", () => {
    it.each(["throws", "second-instance"] as const)(
        "starts when fork %s: main runs node-llama-cpp's test for it, and the engine answers",
        async (forkBehaviour) => {
            const tests = await relay();
            const { started, error, output } = await startAppEngine(forkBehaviour, tests);
            expect(error, output).toBeUndefined();

            expect(started!.supervisor.info.backend).toMatch(/^(cpu|cuda|vulkan)/);
            // At least two tests went through main: the model inspection's binding and the engine's.
            expect(tests.numTests).toBeGreaterThanOrEqual(2);
            expect(tests.tests.at(-1)).toMatchObject({ outcome: "passed", exitCode: 0 });
            const answer = await started!.supervisor.chat({
                requestId: `fuse-off-${forkBehaviour}`,
                workspace: "alice",
                messages: [{ role: "user", content: "Hello" }],
                sampling: { temperature: 0, maxTokens: 4 }
            });
            expect(answer.usage.completionTokens).toBeGreaterThan(0);
        }
    );

    it("does not start without main's relay: node-llama-cpp finds no binary, and the error says that, not 'check the model'", async () => {
        const { started, error, output } = await startAppEngine("throws", undefined);
        expect(started).toBeUndefined();
        expect(output).toContain("runAsNode fuse is disabled"); // the simulated fork was reached, and threw
        expect(error).toMatchObject({
            code: "no_usable_binary",
            message: expect.stringMatching(
                /^The engine could not start: no llama\.cpp binary that Kvault carries loads on this computer\. .+ What to do: .*reinstall Kvault/
            )
        });
    });

    it("when every binary fails its test, says which backends were tried, each one's last words, and what to do", async () => {
        const tests = await relay(["--import", pathToFileURL(fixture("unloadableBinary.mjs")).href]);
        const { started, error } = await startAppEngine("throws", tests);
        expect(started).toBeUndefined();
        expect(tests.tests.length).toBeGreaterThanOrEqual(1);
        expect(tests.tests.every((test) => test.outcome === "failed")).toBe(true);
        expect(error).toMatchObject({ code: "no_usable_binary" });
        const { message } = error as Error;
        expect(message).toContain("Tried, in order: ");
        expect(message).toMatch(/CPU: its test process exited with code 1 \(.*GLIBC_2\.38' not found/);
        expect(message).toContain("What to do:");
    });
});
