import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "../../support/generatedModels.js";

// The fuzz run happens in a child with a 64 MB V8 heap: a reader that believes a count and
// allocates for it cannot hide there (it dies of the limit, or of V8's "invalid size"), and every
// 20th case's retained heap is measured between two full collections. A failure names its seed;
// KVAULT_FUZZ_SEED=<seed> runs it again.
const NUM_RUNS = 1_000;
const HEAP_MB = 64;
const seed = Number(process.env.KVAULT_FUZZ_SEED ?? Date.now() % 2 ** 31);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-gguf-fuzz-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe(`readGgufHeader against random and adversarial headers (seed ${seed})`, () => {
    it(`${NUM_RUNS} files of random sizes: never a crash, a typed error or a valid header, heap bounded`, async () => {
        const child = spawn(
            process.execPath,
            [
                `--max-old-space-size=${HEAP_MB}`,
                "--expose-gc",
                "--import",
                "tsx",
                "test/unit/gguf/fuzzGgufHeaderChild.ts",
                String(seed),
                String(NUM_RUNS),
                scratch
            ],
            { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] }
        );
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), 110_000);
        const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
            child.on("close", (exitCode, exitSignal) => resolve([exitCode, exitSignal]))
        );
        clearTimeout(timer);
        expect({ code, signal }, `seed ${seed}:\n${stderr.slice(-6_000)}`).toEqual({ code: 0, signal: null });
        const counts = JSON.parse(stdout) as Record<string, number>;
        const { peakRssBytes, ...outcomes } = counts;
        console.log(`seed ${seed}: ${JSON.stringify(outcomes)}, peak RSS ${Math.round(peakRssBytes! / 2 ** 20)} MiB`);
        // Both kinds of outcome happen, so the generator reaches past the first checks.
        expect(outcomes.valid, "valid headers among the cases").toBeGreaterThan(NUM_RUNS / 10);
        expect(outcomes.model_unreadable, "damaged headers among the cases").toBeGreaterThan(NUM_RUNS / 10);
        expect(outcomes.model_unsupported, "unsupported headers among the cases").toBeGreaterThan(0);
        expect(Object.values(outcomes).reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(NUM_RUNS);
    }, 120_000);
});
