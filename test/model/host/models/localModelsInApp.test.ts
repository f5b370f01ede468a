// The desktop app's local models, wired as main/index.ts wires them (createHost with main's startEngine
// and appModelPool, each engine a utilityProcess, played here by child_process.fork as in
// test/model/main/engineStartWithoutFork.test.ts), on two generated models: the host's own (tiny, F16)
// and one found in a models folder the settings name (tiny, Q8_0). Everything goes through the RPC the
// window uses: the settings, a workspace's turn on its own model, the page map, audit and canary per
// model, a drill on the local model, and forgetting a deleted workspace.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { EngineSnapshot } from "../../../../contract/EngineSnapshot.js";
import type { AuditSummary, CanaryReport, DrillReport } from "../../../../contract/isolation.js";
import type { MemoryEvent, MemoryEventsPage, MemoryRecordHeader } from "../../../../contract/memoryEvents.js";
import type { ModelPoolSettingsView } from "../../../../contract/modelPoolSettings.js";
import type { LocalModelList } from "../../../../contract/models.js";
import type { RpcAnswer } from "../../../../contract/rpc.js";
import { createHost, type Host } from "../../../../host/createHost.js";
import { childInspector } from "../../../../host/models/inspectModelInChild.js";
import { forkInspectionSpawner } from "../../../../host/models/inspectionProcess.js";
import { modelRootsFor } from "../../../../host/models/modelRoots.js";
import { engineConfigFor } from "../../../../host/settings/engineConfigFor.js";
import type { RpcCaller } from "../../../../host/rpc/RpcDispatcher.js";
import { appModelPool } from "../../../../main/engine/appModelPool.js";
import { startEngine, type StartedEngine } from "../../../../main/engine/startEngine.js";
import { UtilityEngineProcess } from "../../../../main/engine/UtilityEngineProcess.js";
import { forkAsUtilityProcess } from "../../../support/forkAsUtilityProcess.js";
import { isProcessAlive } from "../../process/supervisorFixtures.js";
import { ensureGeneratedModel, ensureQuantizedModel } from "../../../support/generatedModels.js";

const appEngineEntry = fileURLToPath(new URL("../../../../engine/process/appEngineProcessMain.ts", import.meta.url));
const appInspectionEntry = fileURLToPath(new URL("../../../../host/models/appInspectModelProcessMain.ts", import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

const POOL_MODEL = "tiny-q8";
const WORKSPACE = "w-on-q8";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-app-pool-"));
const userData = path.join(scratch, "userData");
const modelsFolder = path.join(scratch, "my-models");
const emptyHome = path.join(scratch, "home");
let host: Host<StartedEngine>;
const caller: RpcCaller = { id: 1, send: () => undefined };
const pids: number[] = [];

async function call<T>(method: string, params: unknown = {}): Promise<T> {
    const answer: RpcAnswer = await host.rpc.call(caller, method, params);
    if (!answer.ok) {
        throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
    }
    return answer.value as T;
}

/** Whether the snapshot holds anything of `workspace`: pages it owns, or KV it keeps in a sequence. */
function holds(snapshot: EngineSnapshot, workspace: string): { owner: boolean; heldTokens: number } {
    return {
        owner: snapshot.pageMap.owners.includes(workspace),
        heldTokens: snapshot.workspaces.find((usage) => usage.workspace === workspace)?.heldTokens ?? 0
    };
}

beforeAll(async () => {
    const own = ensureGeneratedModel("tiny");
    fs.mkdirSync(modelsFolder, { recursive: true });
    fs.mkdirSync(emptyHome, { recursive: true });
    fs.symlinkSync(ensureQuantizedModel("tiny", "q8_0"), path.join(modelsFolder, `${POOL_MODEL}.gguf`));
    const fork = forkAsUtilityProcess({ execArgv: ["--import", tsx], onFork: (_module, child) => pids.push(child.pid!) });
    const spawner = UtilityEngineProcess.spawner(fork, { entry: appEngineEntry, env: process.env, onOutput: () => undefined });
    const inspectModel = childInspector({ spawn: forkInspectionSpawner(appInspectionEntry) });
    const log = (): void => undefined;
    host = await createHost<StartedEngine>({
        kind: "desktop",
        dataDirectory: userData,
        lockOwner: "the Kvault app (test)",
        log,
        requestLines: { printed: false, withPrompts: false },
        startEngine: (_settingsFile, engineSettings) =>
            startEngine({
                modelsDirectory: path.join(userData, "models"),
                libraryFile: path.join(userData, "models.json"),
                modelPath: own,
                spawner,
                inspectModel,
                log,
                engine: { ...engineConfigFor(engineSettings), gpu: false }
            }),
        localModels: (started, { settingsFile, poolSettings }) =>
            appModelPool({
                started,
                settings: () => ({ ...settingsFile.current.engine, gpu: "off" }),
                poolSettings,
                spawner,
                inspectModel,
                log,
                // this user's LM Studio, Ollama and Hugging Face folders are not the test's
                roots: (folders) => modelRootsFor(emptyHome, {}, folders)
            }),
        parts: () => ({ localApi: () => ({ enabled: false, port: 8080, apiKey: null, url: null, problem: null, editable: false }) })
    });
    await host.engine;
});

let closed = false;
afterAll(async () => {
    if (!closed) {
        await host?.close();
    }
    fs.rmSync(scratch, { recursive: true, force: true });
});

describe("the desktop app's host with a workspace on a local model of its own", () => {
    it("loads the model the workspace chose in a second engine, from a folder the settings name", async () => {
        const settings = await call<ModelPoolSettingsView>("setModelPoolSettings", {
            modelsFolders: [modelsFolder],
            modelIdleSeconds: 600
        });
        expect(settings.saved).toEqual({ modelIdleSeconds: 600, modelsMemoryMb: null, modelsFolders: [modelsFolder] });
        expect(JSON.parse(fs.readFileSync(path.join(userData, "settings.json"), "utf8")).modelPool.modelIdleSeconds).toBe(600);
        await expect(call("setModelPoolSettings", { modelsFolders: [path.join(scratch, "nowhere")] })).rejects.toMatchObject({
            code: "invalid_model_pool_setting",
            message: expect.stringContaining("does not exist")
        });

        const listed = await call<LocalModelList>("listLocalModels");
        expect(listed.several).toBe(true);
        expect(listed.models.map((model) => model.id)).toContain(POOL_MODEL);

        await call("saveWorkspace", {
            workspace: {
                id: WORKSPACE,
                name: "On Q8",
                colour: 0,
                settings: { systemPrompt: "", temperature: 0, maxTokens: 4 },
                localModel: POOL_MODEL
            }
        });
        await call("appendMessage", { workspace: WORKSPACE, message: { id: "u-1", role: "user", content: "Which pages hold this?" } });
        // before: "this host cannot load (it runs one model)"; the app had no pool
        const answer = await call<{ usage: { completionTokens: number } }>("chat", {
            requestId: "turn-1",
            workspace: WORKSPACE,
            messages: [{ role: "user", content: "Which pages hold this?" }],
            sampling: { temperature: 0, maxTokens: 4 },
            answerId: "a-1"
        });
        expect(answer.usage.completionTokens).toBeGreaterThan(0);
        expect((await call<LocalModelList>("listLocalModels")).models.find((model) => model.id === POOL_MODEL)?.loaded).toBe(true);
        expect(host.localModels()?.idleMs).toBe(600_000);
    });

    it("shows each loaded model's page map: the workspace is on its own model's, not on the host's", async () => {
        const onPool = await call<EngineSnapshot>("snapshot", { model: POOL_MODEL });
        const onOwn = await call<EngineSnapshot>("snapshot", {});
        expect(holds(onPool, WORKSPACE).heldTokens).toBeGreaterThan(0);
        expect(holds(onOwn, WORKSPACE)).toEqual({ owner: false, heldTokens: 0 });
        await expect(call("snapshot", { model: "never-loaded" })).rejects.toMatchObject({
            code: "model_not_loaded",
            message: expect.stringContaining(`"never-loaded" is not loaded now; loaded: `)
        });
    });

    it("records the local model's memory events in the audit record under its name, and its timeline is read by name", async () => {
        // A prompt longer than a page is handed from the prefill context to the decode context in pages.
        const long = "Pages carry the handoff from the prefill context to the decode context, sealed and verified. ".repeat(16);
        await call("appendMessage", { workspace: WORKSPACE, message: { id: "u-2", role: "user", content: long } });
        await call("chat", {
            requestId: "turn-2",
            workspace: WORKSPACE,
            messages: [{ role: "user", content: long }],
            sampling: { temperature: 0, maxTokens: 4 },
            answerId: "a-2"
        });
        const exported = (await host.memoryRecord.exportJsonl()).trimEnd().split("\n");
        const header = JSON.parse(exported[0]!) as MemoryRecordHeader;
        const events = exported.slice(1).map((line) => JSON.parse(line) as MemoryEvent);
        const onPool = events.filter((event) => event.workspace === WORKSPACE);
        // before: the record polled the host's own engine only, and held nothing of the turn on the local model
        expect(onPool.map((event) => event.kind)).toEqual(expect.arrayContaining(["reserved", "handoffStarted", "sealed", "verified"]));
        expect(new Set(onPool.map((event) => event.model))).toEqual(new Set([POOL_MODEL]));
        expect(header.models.map((model) => [model.id, model.primary])).toEqual([
            [header.models[0]!.id, true],
            [POOL_MODEL, false]
        ]);
        expect(header.models[1]).toMatchObject({ file: `${POOL_MODEL}.gguf` });

        const timeline = await call<MemoryEventsPage>("memoryEvents", { afterSeq: 0, model: POOL_MODEL });
        expect(timeline.events.filter((event) => event.workspace === WORKSPACE).length).toBeGreaterThan(0);
        const ownTimeline = await call<MemoryEventsPage>("memoryEvents", { afterSeq: 0 });
        expect(ownTimeline.events.filter((event) => event.workspace === WORKSPACE)).toEqual([]);
    });

    it("audits and probes every loaded model, each report naming its model", async () => {
        const loaded = (await call<LocalModelList>("listLocalModels")).models.filter((model) => model.loaded).map((model) => model.id);
        expect(loaded).toHaveLength(2);
        for (const model of loaded) {
            const audit = await call<AuditSummary>("audit", { model });
            expect(audit).toMatchObject({ model, ok: true, numViolations: 0 });
        }
        const canary = await call<CanaryReport>("runCanary", { model: POOL_MODEL, fillerTokens: 64 });
        expect(canary).toMatchObject({ model: POOL_MODEL, passed: true });
        const drill = await call<DrillReport>("runDrill", { id: "flipped-byte", model: POOL_MODEL });
        expect(drill).toMatchObject({
            model: POOL_MODEL,
            guardFired: true,
            victimClean: true,
            guardError: { code: "handoff_checksum_mismatch" }
        });
    });

    it("forgetting a deleted workspace frees and scrubs its KV on the engine of the model it ran on", async () => {
        await call("removeWorkspace", { workspace: WORKSPACE });
        await call("forgetWorkspace", { workspace: WORKSPACE });
        // before: forgetWorkspace reached the host's own engine only, and the pool's kept the workspace's KV until it unloaded
        const onPool = await call<EngineSnapshot>("snapshot", { model: POOL_MODEL });
        expect(holds(onPool, WORKSPACE)).toEqual({ owner: false, heldTokens: 0 });
        expect(onPool.workspaces.map((usage) => usage.workspace)).not.toContain(WORKSPACE);
        expect((await call<AuditSummary>("audit", { model: POOL_MODEL })).ok).toBe(true);
    });

    it("closing the host stops the engine of every loaded model, the host's and the local one's", async () => {
        expect(pids).toHaveLength(2);
        await host.close();
        closed = true;
        for (const pid of pids) {
            await vi.waitFor(() => expect(isProcessAlive(pid), `engine process ${pid}`).toBe(false), { timeout: 10_000, interval: 50 });
        }
    });
});
