import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EngineInfo } from "../../../../contract/engineProtocol.js";
import { fileIdentity } from "../../../../host/models/fileIdentity.js";
import type { DiskModel } from "../../../../host/models/findModelsOnDisk.js";
import { EnginePool, type PooledEngine } from "../../../../host/supervisor/EnginePool.js";

const MB = 1024 * 1024;
const directories: string[] = [];
afterEach(() => {
    vi.useRealTimers();
    for (const directory of directories.splice(0)) {
        fs.rmSync(directory, { recursive: true, force: true });
    }
});

/** An engine that only says which file it runs and whether it was stopped: the pool's bookkeeping is what is tested. */
function fakeEngine(modelPath: string): PooledEngine & { disposed: boolean } {
    return {
        info: { modelPath } as EngineInfo,
        disposed: false,
        chat: () => Promise.reject(new Error("not used")),
        call: () => Promise.reject(new Error("not used")),
        async dispose() {
            this.disposed = true;
        }
    };
}

/** Model files in a temporary folder, with their plans in MB. */
function models(plans: Record<string, number>): { found: DiskModel[]; planOf: (modelPath: string) => number } {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-pool-"));
    directories.push(directory);
    const found = Object.keys(plans).map((id) => {
        const file = path.join(directory, `${id}.gguf`);
        fs.writeFileSync(file, "GGUF");
        return { id, path: file, source: "folder" as const, identity: fileIdentity(file)! };
    });
    return { found, planOf: (modelPath) => (plans[path.basename(modelPath, ".gguf")] ?? 1) * MB };
}

function pool(plans: Record<string, number>, budgetMb: number, idleMs = 60_000): { pool: EnginePool; lines: string[]; found: DiskModel[] } {
    const { found, planOf } = models(plans);
    const lines: string[] = [];
    const primary = fakeEngine(path.join(path.dirname(found[0]!.path), "own.gguf"));
    return {
        found,
        lines,
        pool: new EnginePool({
            primary: { engine: primary, id: () => "own" },
            available: () => Promise.resolve(found),
            plan: (modelPath) =>
                Promise.resolve({ lines: [{ label: "Model weights", bytes: planOf(modelPath) }], totalBytes: planOf(modelPath) }),
            start: (modelPath) => Promise.resolve(fakeEngine(modelPath)),
            budgetBytes: budgetMb * MB,
            idleMs,
            log: (line) => lines.push(line)
        })
    };
}

describe("EnginePool: models loaded on first use, within a budget, unloaded when idle", () => {
    it("loads a model once for requests at the same time, and unloads the least recently used idle one to make room", async () => {
        const { pool: engines, lines } = pool({ own: 2, a: 3, b: 3, c: 3 }, 9);
        const [first, second] = await Promise.all([engines.acquire("a"), engines.acquire("a")]);
        expect(first.engine).toBe(second.engine);
        first.release();
        second.release();
        const b = await engines.acquire("b");
        b.release();
        expect((await engines.loaded()).map((model) => model.id)).toEqual(["own", "a", "b"]);

        const c = await engines.acquire("c"); // 2 + 3 + 3 + 3 > 9: "a", used least recently, goes

        expect(c.unloaded).toEqual(["a"]);
        expect((await engines.loaded()).map((model) => model.id)).toEqual(["own", "b", "c"]);
        expect(lines).toContain('Unloaded "a" (3.0 MB): to make room for "c" (3.0 MB) within the 9.0 MB budget.');
        await engines.dispose();
    });

    it("refuses a model that cannot fit beside the busy ones, with the plan's numbers, unloading nothing", async () => {
        const { pool: engines } = pool({ own: 2, a: 3, big: 6 }, 9);
        const held = await engines.acquire("a");

        await expect(engines.acquire("big")).rejects.toMatchObject({
            code: "model_memory_budget",
            message:
                'Loading "big" needs 6.0 MB (Model weights: 6.0 MB); the model memory budget is 9.0 MB, and 5.0 MB of it is held by models that cannot be unloaded now: "own" 2.0 MB (the server\'s model), "a" 3.0 MB (1 request(s) running). Wait for running requests to end, raise the budget (Settings › Local models, or --models-memory-mb), or use a smaller model.'
        });
        expect((await engines.loaded()).map((model) => model.id)).toEqual(["own", "a"]);
        held.release();
        await engines.dispose();
    });

    it("unloads a model its idle time after its last request ended, and says when in expiresAt", async () => {
        vi.useFakeTimers({ now: 1_000_000 });
        const { pool: engines, lines } = pool({ own: 1, a: 1 }, 9, 5_000);
        const lease = await engines.acquire("a");
        const engine = lease.engine as PooledEngine & { disposed: boolean };
        expect((await engines.loaded())[1]!.expiresAt).toBeUndefined();
        lease.release();
        expect((await engines.loaded())[1]!.expiresAt).toBe(1_005_000);

        vi.advanceTimersByTime(5_000);

        expect((await engines.loaded()).map((model) => model.id)).toEqual(["own"]);
        expect(engine.disposed).toBe(true);
        expect(lines).toContain('Unloaded "a" (1.0 MB): no request for 5 s.');
    });

    it("refuses a model whose file changed since it was found, and one it does not know", async () => {
        const { pool: engines, found } = pool({ own: 1, a: 1 }, 9);
        fs.appendFileSync(found[1]!.path, "more");

        await expect(engines.acquire("a")).rejects.toMatchObject({ code: "model_file_changed" });
        await expect(engines.acquire("nothing")).rejects.toMatchObject({ code: "model_not_found" });
        expect(await engines.has("own")).toBe(false); // the server's own model is served as before, not through the pool
    });
});
