// `npm run bench [-- <filter>]`: runs the benchmarks one after another (never in parallel: they
// compete for the same cores), prints a table per benchmark and writes the figures to
// test/.artifacts/bench-results.json. A filter runs only the benchmarks whose name contains it.
import fs from "node:fs";
import path from "node:path";
import { repositoryRoot } from "../support/generatedModels.js";
import { auditBench } from "./auditBench.js";
import { BenchmarkRefusedError, formatNumber, machineDescription, type Benchmark } from "./benchUtils.js";
import { decodeBench } from "./decodeBench.js";
import { familiesBench } from "./familiesBench.js";
import { gpuBench } from "./gpu/gpuBench.js";
import { grammarBench } from "./grammarBench.js";
import { handoffBench } from "./handoffBench.js";
import { itlBench } from "./itlBench.js";
import { memoryViewBench } from "./memoryViewBench.js";
import { peerBench } from "./peer/peerBench.js";
import { scrubChecksumBench } from "./scrubChecksumBench.js";
import { sealVerifyBench } from "./sealVerifyBench.js";
import { speculationBench } from "./speculationBench.js";
import { swapBench } from "./swapBench.js";
import { workspacesBench } from "./workspacesBench.js";

const benchmarks: readonly Benchmark[] = [
    scrubChecksumBench,
    sealVerifyBench,
    handoffBench,
    decodeBench,
    workspacesBench,
    itlBench,
    swapBench,
    auditBench,
    peerBench,
    speculationBench,
    familiesBench,
    gpuBench,
    grammarBench,
    memoryViewBench
];
const resultsPath = path.join(repositoryRoot, "test", ".artifacts", "bench-results.json");
/** A hung native call must not hold the machine: the whole run ends after this long (ms). */
const WATCHDOG_MS = 45 * 60 * 1000;

interface StoredResults {
    machine: Record<string, unknown>;
    benchmarks: Record<string, unknown>;
}

function readStoredResults(): StoredResults | undefined {
    try {
        return JSON.parse(fs.readFileSync(resultsPath, "utf8")) as StoredResults;
    } catch {
        return undefined;
    }
}

async function main(): Promise<number> {
    const filter = process.argv[2]?.toLowerCase();
    const selected = benchmarks.filter((benchmark) =>
        filter === undefined ? benchmark.explicitOnly !== true : benchmark.name.includes(filter)
    );
    if (selected.length === 0) {
        console.error(`No benchmark matches "${filter}". Benchmarks: ${benchmarks.map((benchmark) => benchmark.name).join(", ")}.`);
        return 2;
    }
    const watchdog = setTimeout(() => {
        console.error(`The benchmarks ran past ${WATCHDOG_MS / 60_000} minutes; stopping.`);
        process.exit(124);
    }, WATCHDOG_MS);
    watchdog.unref();

    // A filtered run replaces only its own benchmarks' figures in the file.
    const stored: StoredResults = { benchmarks: {}, ...readStoredResults(), machine: machineDescription() };
    let numFailed = 0;
    const runStartedAt = performance.now();
    for (const benchmark of selected) {
        console.log(`\n=== ${benchmark.name}: ${benchmark.description}`);
        const startedAt = performance.now();
        try {
            const figures = await benchmark.run();
            const durationS = (performance.now() - startedAt) / 1000;
            stored.benchmarks[benchmark.name] = { ranAt: new Date().toISOString(), durationS, ...figures };
            console.log(`(${benchmark.name}: ${formatNumber(durationS, 1)} s)`);
        } catch (error) {
            numFailed++;
            const message =
                error instanceof BenchmarkRefusedError
                    ? `refused: ${error.message}`
                    : error instanceof Error
                      ? (error.stack ?? error.message)
                      : String(error);
            stored.benchmarks[benchmark.name] = { ranAt: new Date().toISOString(), error: message };
            console.error(`${benchmark.name} failed:\n${message}`);
        }
    }
    clearTimeout(watchdog);

    fs.mkdirSync(path.dirname(resultsPath), { recursive: true });
    fs.writeFileSync(resultsPath, `${JSON.stringify(stored, null, 2)}\n`);
    console.log(
        `\nRan ${selected.length} benchmark(s) in ${formatNumber((performance.now() - runStartedAt) / 1000, 1)} s; ` +
            `figures in ${path.relative(process.cwd(), resultsPath)}${numFailed > 0 ? `; ${numFailed} failed` : ""}.`
    );
    return numFailed > 0 ? 1 : 0;
}

process.exitCode = await main();
