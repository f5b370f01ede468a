// The app's engine start: the saved model, or the demo model when the saved one cannot load,
// never a fallback when no binary loads at all. Engine processes are stand-ins that answer
// `ready` or `startFailed` as the real one does (test/model/main/ starts real ones).
import { EventEmitter } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineCommand, EngineErrorPayload } from "../../../../contract/engineProtocol.js";
import type { ModelFacts } from "../../../../contract/models.js";
import type { EngineConfigInput } from "../../../../engine/index.js";
import type { ModelInspector } from "../../../../host/models/inspectModelInChild.js";
import type { EngineChildProcess, EngineProcessSpawner } from "../../../../host/supervisor/EngineProcessSpawner.js";
import type { BindingTestRecord } from "../../../../main/engine/BindingTestRelay.js";
import { demoModelPath } from "../../../../main/engine/resolveAppModel.js";
import { startEngine, type StartedEngine } from "../../../../main/engine/startEngine.js";

/** An engine process that fails to start on the paths in `refuse` with that reason, and is ready otherwise. */
class StandInEngine extends EventEmitter implements EngineChildProcess {
    static nextPid = 9000;
    readonly pid = StandInEngine.nextPid++;

    constructor(config: EngineConfigInput, refuse: ReadonlyMap<string, EngineErrorPayload>) {
        super();
        const reason =
            refuse.get(config.modelPath) ?? (config.draftModelPath === undefined ? undefined : refuse.get(config.draftModelPath));
        setTimeout(() => {
            if (reason === undefined) {
                this.emit("message", {
                    type: "ready",
                    info: {
                        modelName: path.basename(config.modelPath),
                        modelPath: config.modelPath,
                        mode: {},
                        window: { limit: config.window ?? 4096 },
                        numDecodeSequences: config.numDecodeSequences ?? 4
                    }
                });
            } else {
                this.emit("message", { type: "startFailed", error: reason });
                this.emit("exit", 1, null);
            }
        }, 1);
    }

    send(command: EngineCommand): void {
        if (command.type === "shutdown") {
            setTimeout(() => this.emit("exit", 0, null), 1);
        }
    }

    kill(): void {
        setTimeout(() => this.emit("exit", null, "SIGKILL"), 1);
    }
}

let userData: string;
const started: StartedEngine[] = [];

function spawner(
    refuse: ReadonlyMap<string, EngineErrorPayload> = new Map()
): EngineProcessSpawner & { readonly models: string[]; readonly configs: EngineConfigInput[] } {
    const models: string[] = [];
    const configs: EngineConfigInput[] = [];
    return {
        models,
        configs,
        spawnEngineProcess: (config) => {
            models.push(config.modelPath);
            configs.push(config);
            return new StandInEngine(config, refuse);
        }
    };
}

async function start(
    modelPath: string | null,
    engines: EngineProcessSpawner,
    tests: readonly BindingTestRecord[] = [],
    // These files are stand-ins too; the inspection of real and crafted files is tested in test/model/host/models/.
    inspectModel: ModelInspector = async () => ({}) as ModelFacts,
    engineSettings?: Omit<EngineConfigInput, "modelPath">
): Promise<StartedEngine> {
    const engine = await startEngine({
        modelsDirectory: path.join(userData, "models"),
        libraryFile: path.join(userData, "models.json"),
        modelPath,
        engine: engineSettings,
        spawner: engines,
        inspectModel,
        log: () => undefined,
        binaryTests: { numTests: tests.length, tests }
    });
    started.push(engine);
    return engine;
}

beforeEach(() => {
    userData = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-start-"));
});

afterEach(async () => {
    await Promise.all(started.splice(0).map((engine) => engine.supervisor.dispose()));
    fs.rmSync(userData, { recursive: true, force: true });
});

describe("startEngine", () => {
    it("loads the model the settings name, and lists it by its file name", async () => {
        const saved = path.join(userData, "Llama-3.2-1B-Q4_K_M.gguf");
        fs.writeFileSync(saved, "GGUF");
        const engines = spawner();
        const engine = await start(saved, engines);
        expect(engines.models).toEqual([saved]);
        expect(engine.fallback).toBeUndefined();
        expect(engine.modelId()).toBe("Llama-3.2-1B-Q4_K_M");
        expect(engine.health()).toMatchObject({ state: "ready" });
    });

    it("starts the demo model, saying why, when the saved model is gone", async () => {
        const gone = path.join(userData, "moved-away.gguf");
        const engines = spawner();
        const engine = await start(gone, engines);
        expect(engines.models).toEqual([demoModelPath(path.join(userData, "models"))]);
        expect(engine.modelId()).toBe("tiny");
        expect(engine.fallback).toEqual({ modelPath: gone, reason: expect.stringContaining(`Cannot open the model ${gone}`) });
    });

    it("starts the demo model when the saved one does not load, and keeps the engine's reason", async () => {
        const damaged = path.join(userData, "damaged.gguf");
        fs.writeFileSync(damaged, "GGUF");
        const engines = spawner(
            new Map([[damaged, { code: "engine_start_failed", message: "Loading the model failed (tensor data past the end)." }]])
        );
        const engine = await start(damaged, engines);
        expect(engines.models).toEqual([damaged, demoModelPath(path.join(userData, "models"))]);
        expect(engine.fallback?.reason).toContain("tensor data past the end");
    });

    it("does not fall back when no binary loads: the demo model would not start either", async () => {
        const saved = path.join(userData, "fine.gguf");
        fs.writeFileSync(saved, "GGUF");
        const noBinary = { code: "engine_start_failed", message: "Loading the model failed (NoBinaryFoundError)." };
        const engines = spawner(new Map([[saved, noBinary]]));
        const failed: BindingTestRecord = {
            backend: "cpu",
            binaryPath: undefined,
            outcome: "failed",
            exitCode: 1,
            output: "Illegal instruction"
        };
        await expect(start(saved, engines, [failed])).rejects.toMatchObject({ code: "no_usable_binary" });
        expect(engines.models).toEqual([saved]);
    });

    it("gives the local API the model facts, from one inspection per file for the start, a switch and /v1/models", async () => {
        const saved = path.join(userData, "first.gguf");
        const other = path.join(userData, "second.gguf");
        fs.writeFileSync(saved, "GGUF");
        fs.writeFileSync(other, "GGUF 2");
        const inspected: string[] = [];
        const engine = await start(saved, spawner(), [], async (modelPath) => {
            inspected.push(path.basename(modelPath));
            return { fileName: path.basename(modelPath), architecture: "llama" } as ModelFacts;
        });
        expect(await engine.modelFacts(saved)).toMatchObject({ fileName: "first.gguf", architecture: "llama" });
        await engine.supervisor.inspectModel(other); // what the model panel's inspect calls
        await engine.supervisor.switchModel(other);
        expect(await engine.modelFacts(other)).toMatchObject({ fileName: "second.gguf" });
        expect(inspected).toEqual(["first.gguf", "second.gguf"]);
        // a file replaced under the same name is a new file: inspected again
        fs.writeFileSync(other, "GGUF replaced");
        await engine.modelFacts(other);
        expect(inspected).toEqual(["first.gguf", "second.gguf", "second.gguf"]);
    });

    describe("with a draft model in the settings", () => {
        const drafting = (draftModelPath: string): Omit<EngineConfigInput, "modelPath"> => ({ speculation: "draft-model", draftModelPath });

        it("starts the model with it when it serves", async () => {
            const saved = path.join(userData, "model.gguf");
            fs.writeFileSync(saved, "GGUF");
            const draft = path.join(userData, "draft.gguf");
            const engines = spawner();
            const engine = await start(saved, engines, [], async () => ({}) as ModelFacts, drafting(draft));
            expect(engines.configs.map((config) => [config.modelPath, config.draftModelPath])).toEqual([[saved, draft]]);
            expect(engine.draftFallback).toBeUndefined();
        });

        it("keeps the model and turns speculation off, saying why, when the draft model's file cannot be read", async () => {
            const saved = path.join(userData, "model.gguf");
            fs.writeFileSync(saved, "GGUF");
            const draft = path.join(userData, "crafted-draft.gguf");
            const engines = spawner();
            const inspect: ModelInspector = async (modelPath) => {
                if (modelPath === draft) {
                    throw new Error("The file is not a GGUF model (its magic is 0x00000000).");
                }
                return {} as ModelFacts;
            };
            const engine = await start(saved, engines, [], inspect, drafting(draft));
            expect(engines.configs.map((config) => [config.modelPath, config.speculation, config.draftModelPath])).toEqual([
                [saved, undefined, undefined]
            ]);
            expect(engine.fallback).toBeUndefined();
            expect(engine.draftFallback).toEqual({ draftModel: draft, reason: "The file is not a GGUF model (its magic is 0x00000000)." });
        });

        it("keeps the model and turns speculation off when the engine refuses the draft, never falling back to the demo model", async () => {
            const saved = path.join(userData, "model.gguf");
            fs.writeFileSync(saved, "GGUF");
            const draft = path.join(userData, "other-tokenizer.gguf");
            const unfit = { code: "draft_model_unfit", message: "The draft model cannot draft for this model: vocabulary type differs." };
            const engines = spawner(new Map([[draft, unfit]]));
            const engine = await start(saved, engines, [], async () => ({}) as ModelFacts, drafting(draft));
            expect(engines.configs.map((config) => [config.modelPath, config.draftModelPath])).toEqual([
                [saved, draft],
                [saved, undefined]
            ]);
            expect(engine.modelId()).toBe("model");
            expect(engine.draftFallback?.reason).toContain("vocabulary type differs");
        });
    });
});
