/**
 * The heavy tiers (model, gpu, e2e) share one vitest group of two workers, split into two lanes that
 * each run one file at a time on their own half of the cores (test/support/pinToLaneCores.ts): a
 * file's native threads never compete with another file's, since ggml's threads wait for each other
 * at every step and a descheduled one stalls the rest. The lanes are interchangeable: a file takes
 * whichever is free (test/support/takeFreeLane.ts), so neither worker waits while the other lane's
 * kind of file is all that is left. Files that need the whole machine hold both lanes and run last.
 */
export type TestLane = 0 | 1;

declare module "vitest" {
    export interface ProvidedContext {
        /** Whether this run has single-lane files for both lanes, so each lane keeps to its own cores (LaneSequencer decides). */
        pinTestLanes: boolean;
    }
}

/** The lanes, in the order a whole-machine file takes them (one order, so two such files never wait on each other). */
export const testLanes: readonly TestLane[] = [0, 1];

/** The projects whose files run in lanes, one vitest group of two workers. */
export const laneProjectNames: readonly string[] = ["model", "gpu", "e2e"];

/** Seconds a file's worker spends beside its tests: start, imports, the file's own setup. */
export const FILE_OVERHEAD_SECONDS = 4;

/** Seconds assumed for a heavy file missing from {@link expectedFileSeconds}. */
export const UNLISTED_FILE_SECONDS = 3;

/**
 * Seconds of tests per file, measured by a full run on the 2-core CI machine (the command is in
 * docs/TESTING.md), for the files that take 8 seconds or more; paths relative to test/.
 * Only the order of the run depends on it: a stale entry costs time, never a result.
 */
export const expectedFileSeconds: ReadonlyMap<string, number> = new Map([
    ["e2e/workspaces.test.ts", 85],
    ["model/families/gemma3.test.ts", 82],
    ["model/host/models/modelsOnDisk.test.ts", 62],
    ["e2e/settings.test.ts", 50],
    ["model/families/llama3.test.ts", 47],
    ["model/families/qwen3.test.ts", 43],
    ["model/families/mistral.test.ts", 39],
    ["model/families/qwen2.test.ts", 38],
    ["gpu/vulkanIsolation.test.ts", 32],
    ["model/host/models/resumeDownload.test.ts", 31],
    ["e2e/persistence.test.ts", 29],
    ["model/host/models/splitDownload.test.ts", 28],
    ["e2e/settingsBackends.test.ts", 27],
    ["gpu/vulkanPagedFamilies.test.ts", 25],
    ["gpu/vulkanFamilies.test.ts", 25],
    ["model/host/models/inspectModelInChild.test.ts", 24],
    ["e2e/speculation.test.ts", 24],
    ["cli/makeModelCli.test.ts", 23],
    ["model/engine/tokenizeInSlices.test.ts", 22],
    ["e2e/mcpTools.test.ts", 21],
    ["model/host/models/craftedModelFiles.test.ts", 21],
    ["model/audit/soak.test.ts", 21],
    ["cli/store/storeCrash.test.ts", 19],
    ["e2e/localModels.test.ts", 17],
    ["e2e/login.test.ts", 17],
    ["model/host/computeBackend.test.ts", 17],
    ["model/main/engineStartWithoutFork.test.ts", 15],
    ["model/host/toolCallsApi.test.ts", 14],
    ["e2e/models.test.ts", 14],
    ["model/families/phi3.test.ts", 13],
    ["model/host/serveCli.test.ts", 11],
    ["model/host/models/readGgufHeader.test.ts", 11],
    ["model/process/stateDirectoryFaults.test.ts", 11],
    ["e2e/chatControls.test.ts", 10],
    ["e2e/modelLibrary.test.ts", 10],
    ["e2e/welcome.test.ts", 10],
    ["model/process/supervisedChat.test.ts", 10],
    ["e2e/demoModelNote.test.ts", 9],
    ["cli/mcp/mcpManager.test.ts", 8],
    ["cli/kvaultCommand.test.ts", 8]
]);

/**
 * Files that ask for 2 threads whatever the cores they are given (a context's thread claims and
 * pools, batches timed by their threads), and the status bar's browser file, which reads an
 * answer's live rate while the turn runs: on one core the engine writes the e2e window's answer
 * before the page's next look (taskset -c 1: the sidebar never read "running" with the rate shown).
 * They hold both lanes and run on the whole machine.
 */
export const wholeMachineFiles: ReadonlySet<string> = new Set([
    "test/model/runtime/releaseThreadsPromptly.test.ts",
    "test/model/runtime/gatherDecodes.test.ts",
    "test/model/runtime/contextThreadpool.test.ts",
    "test/model/runtime/orderDecodesBySequence.test.ts",
    "test/model/engine/prefillBatches.test.ts",
    "test/model/engine/draftSpeculation.test.ts",
    "test/model/host/models/splitDownload.test.ts",
    "test/e2e/statusBar.test.ts"
]);

/**
 * Whether a heavy project's file holds both lanes while it runs; `relativePath` is relative to the
 * repository root. The gpu project does: Mesa's lavapipe sizes its thread pool by the cores online,
 * not by the cores a process may use.
 */
export function needsWholeMachine(projectName: string, relativePath: string): boolean {
    return projectName === "gpu" || wholeMachineFiles.has(relativePath);
}

/** The seconds a file is expected to hold its lane, worker overhead included. */
export function expectedLaneSeconds(relativePath: string): number {
    const seconds = expectedFileSeconds.get(relativePath.replace(/^test\//, "")) ?? UNLISTED_FILE_SECONDS;
    return seconds + FILE_OVERHEAD_SECONDS;
}
