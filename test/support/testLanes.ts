/**
 * The tiers that run processes (cli, model, gpu, e2e) share one vitest group, split into two lanes that
 * each run one file at a time on their own half of the cores (test/support/pinToLaneCores.ts): a
 * file's native threads never compete with another file's, since ggml's threads wait for each other
 * at every step and a descheduled one stalls the rest. The lanes are interchangeable: a file takes
 * whichever is free (test/support/takeTestLanes.ts), so neither worker waits while the other lane's
 * kind of file is all that is left. Files that need the whole machine hold both lanes and run last.
 */
export type TestLane = 0 | 1;

declare module "vitest" {
    export interface ProvidedContext {
        /** Whether this run has single-lane files for both lanes, so each lane keeps to its own cores (LaneSequencer decides). */
        pinTestLanes: boolean;
        /** The cores the run has (the main process's os.availableParallelism): what the lanes split, and what a whole-machine file gets back. */
        laneCoreCount: number;
    }
}

/** The lanes, in the order a whole-machine file takes them (one order, so two such files never wait on each other). */
export const testLanes: readonly TestLane[] = [0, 1];

/** The projects whose files run in lanes, one vitest group of two workers. */
export const laneProjectNames: readonly string[] = ["cli", "model", "gpu", "e2e"];

/** Seconds assumed for a heavy file missing from {@link expectedFileSeconds}. */
export const UNLISTED_FILE_SECONDS = 3;

/**
 * Seconds each file held its lane (its imports, hooks and tests), for the files that held one 8
 * seconds or more, from the lane trace of a full run on the 2-core CI guest (docs/TESTING.md has
 * the run and its command); paths relative to test/.
 * Only the order of the run depends on it: a stale entry costs time, never a result.
 */
export const expectedFileSeconds: ReadonlyMap<string, number> = new Map([
    ["model/host/models/modelsOnDisk.test.ts", 76],
    ["model/families/gemma3.test.ts", 59],
    ["model/host/models/resumeDownload.test.ts", 36],
    ["model/families/llama3.test.ts", 33],
    ["model/host/models/craftedModelFiles.test.ts", 33],
    ["model/families/qwen3.test.ts", 32],
    ["model/engine/tokenizeInSlices.test.ts", 30],
    ["gpu/vulkanPagedFamilies.test.ts", 30],
    ["e2e/settings.test.ts", 30],
    ["model/families/qwen2.test.ts", 29],
    ["e2e/workspaces.test.ts", 27],
    ["e2e/login.test.ts", 25],
    ["model/host/models/inspectModelInChild.test.ts", 24],
    ["e2e/settingsBackends.test.ts", 23],
    ["e2e/mcpTools.test.ts", 22],
    ["model/audit/soak.test.ts", 21],
    ["e2e/persistence.test.ts", 20],
    ["model/backends/remoteWorkspaces.test.ts", 20],
    ["model/host/computeBackend.test.ts", 18],
    ["cli/store/storeCrash.test.ts", 18],
    ["gpu/vulkanIsolation.test.ts", 18],
    ["cli/makeModelCli.test.ts", 17],
    ["e2e/speculation.test.ts", 17],
    ["model/main/engineStartWithoutFork.test.ts", 17],
    ["model/host/serveCli.test.ts", 16],
    ["gpu/vulkanFamilies.test.ts", 16],
    ["e2e/localModels.test.ts", 14],
    ["cli/kvaultCommand.test.ts", 14],
    ["model/backends/gatewayEndpoints.test.ts", 14],
    ["e2e/chatControls.test.ts", 12],
    ["e2e/demoModelNote.test.ts", 12],
    ["e2e/modelLibrary.test.ts", 12],
    ["model/process/stateDirectoryFaults.test.ts", 12],
    ["model/host/memoryRecordExport.test.ts", 12],
    ["e2e/welcome.test.ts", 12],
    ["e2e/turnErrors.test.ts", 12],
    ["model/process/supervisedChat.test.ts", 12],
    ["model/backends/leakProbeRpc.test.ts", 11],
    ["model/host/toolCallsApi.test.ts", 11],
    ["model/host/models/localModelsInApp.test.ts", 11],
    ["model/families/mistral.test.ts", 11],
    ["e2e/layout.test.ts", 11],
    ["model/probe/leakProbe.test.ts", 11],
    ["model/process/switchModel.test.ts", 10],
    ["model/engine/textStreamer.test.ts", 10],
    ["e2e/isolationAllModels.test.ts", 10],
    ["e2e/models.test.ts", 10],
    ["model/families/familyModelFacts.test.ts", 10],
    ["model/host/frozenEngine.test.ts", 10],
    ["e2e/remoteWorkspace.test.ts", 9],
    ["e2e/views.test.ts", 9],
    ["e2e/handoffDemo.test.ts", 9],
    ["e2e/modelDownload.test.ts", 9],
    ["cli/mcp/mcpManager.test.ts", 9],
    ["model/host/models/downloadLimits.test.ts", 9],
    ["e2e/contextMeter.test.ts", 9],
    ["model/host/hostTurns.test.ts", 8],
    ["e2e/isolation.test.ts", 8],
    ["model/host/models/readGgufHeader.test.ts", 8],
    ["gpu/vulkanGpuLayers.test.ts", 8]
]);

/**
 * Files that ask for 2 threads whatever the cores they are given (a context's thread claims and
 * pools, batches timed by their threads, the 20-turn chat's two modes compared at 2 threads: on one
 * core its 2 threads took 51 s where the whole machine takes 1), and the status bar's browser file, which reads an
 * answer's live rate while the turn runs: on one core the engine writes the e2e window's answer
 * before the page's next look (taskset -c 1: the sidebar never read "running" with the rate shown).
 * They hold both lanes and run on the whole machine.
 */
export const wholeMachineFiles: ReadonlySet<string> = new Set([
    "test/model/runtime/releaseThreadsPromptly.test.ts",
    "test/model/runtime/gatherDecodes.test.ts",
    "test/model/runtime/contextThreadpool.test.ts",
    "test/model/runtime/orderDecodesBySequence.test.ts",
    "test/model/runtime/computeTurns.test.ts",
    "test/model/engine/prefillBatches.test.ts",
    "test/model/engine/draftSpeculation.test.ts",
    "test/model/service/longChat.test.ts",
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

/** The seconds a file is expected to hold its lane. */
export function expectedLaneSeconds(relativePath: string): number {
    return expectedFileSeconds.get(relativePath.replace(/^test\//, "")) ?? UNLISTED_FILE_SECONDS;
}
