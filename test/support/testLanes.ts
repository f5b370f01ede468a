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
 * Seconds of tests per file, measured by a full run on the 2-core CI machine (the clean-clone run
 * of df35890 in docs/TESTING.md, with its command), for the files that took 8 seconds or more and
 * passed; paths relative to test/.
 * Only the order of the run depends on it: a stale entry costs time, never a result.
 */
export const expectedFileSeconds: ReadonlyMap<string, number> = new Map([
    ["model/host/models/modelsOnDisk.test.ts", 101],
    ["model/families/gemma3.test.ts", 71],
    ["e2e/settings.test.ts", 57],
    ["model/families/mistral.test.ts", 48],
    ["model/families/llama3.test.ts", 46],
    ["model/families/qwen3.test.ts", 45],
    ["model/host/models/resumeDownload.test.ts", 45],
    ["unit/main/index.test.ts", 44],
    ["model/families/qwen2.test.ts", 43],
    ["model/engine/tokenizeInSlices.test.ts", 42],
    ["model/host/models/craftedModelFiles.test.ts", 40],
    ["gpu/vulkanPagedFamilies.test.ts", 39],
    ["gpu/vulkanIsolation.test.ts", 38],
    ["gpu/vulkanFamilies.test.ts", 37],
    ["e2e/persistence.test.ts", 36],
    ["model/host/models/inspectModelInChild.test.ts", 36],
    ["e2e/localModels.test.ts", 35],
    ["e2e/settingsBackends.test.ts", 34],
    ["e2e/speculation.test.ts", 32],
    ["e2e/login.test.ts", 31],
    ["e2e/mcpTools.test.ts", 31],
    ["e2e/workspaces.test.ts", 31],
    ["model/host/computeBackend.test.ts", 31],
    ["model/backends/remoteWorkspaces.test.ts", 30],
    ["model/host/models/splitDownload.test.ts", 28],
    ["model/host/serveCli.test.ts", 28],
    ["e2e/models.test.ts", 27],
    ["model/main/engineStartWithoutFork.test.ts", 27],
    ["e2e/isolationAllModels.test.ts", 25],
    ["cli/makeModelCli.test.ts", 24],
    ["e2e/demoModelNote.test.ts", 24],
    ["e2e/modelLibrary.test.ts", 24],
    ["e2e/welcome.test.ts", 23],
    ["model/backends/gatewayEndpoints.test.ts", 23],
    ["e2e/modelDownload.test.ts", 21],
    ["model/audit/soak.test.ts", 21],
    ["model/host/memoryRecordExport.test.ts", 20],
    ["cli/store/storeCrash.test.ts", 19],
    ["e2e/chatControls.test.ts", 19],
    ["model/backends/leakProbeRpc.test.ts", 19],
    ["model/host/toolCallsApi.test.ts", 18],
    ["model/process/switchModel.test.ts", 18],
    ["model/process/stateDirectoryFaults.test.ts", 17],
    ["model/process/supervisedChat.test.ts", 17],
    ["model/engine/textStreamer.test.ts", 16],
    ["model/probe/leakProbe.test.ts", 16],
    ["e2e/turnErrors.test.ts", 15],
    ["e2e/layout.test.ts", 14],
    ["model/families/phi3.test.ts", 14],
    ["model/host/models/localModelsInApp.test.ts", 14],
    ["cli/kvaultCommand.test.ts", 13],
    ["e2e/handoffDemo.test.ts", 13],
    ["e2e/pageMap.test.ts", 13],
    ["e2e/remoteWorkspace.test.ts", 13],
    ["e2e/turnReload.test.ts", 13],
    ["model/host/models/readGgufHeader.test.ts", 13],
    ["e2e/attachments.test.ts", 12],
    ["e2e/contextMeter.test.ts", 12],
    ["e2e/views.test.ts", 12],
    ["gpu/vulkanGpuLayers.test.ts", 12],
    ["model/host/models/downloadLimits.test.ts", 12],
    ["e2e/isolation.test.ts", 11],
    ["e2e/memoryTimeline.test.ts", 11],
    ["e2e/modelCatalogue.test.ts", 11],
    ["e2e/retrieval.test.ts", 11],
    ["model/families/familyModelFacts.test.ts", 11],
    ["model/host/frozenEngine.test.ts", 11],
    ["e2e/demoModelLabel.test.ts", 10],
    ["e2e/markdown.test.ts", 10],
    ["e2e/pageMapZoom.test.ts", 10],
    ["e2e/presets.test.ts", 10],
    ["model/host/hostTurns.test.ts", 10],
    ["model/host/models/lyingDownloadSize.test.ts", 10],
    ["gpu/vulkanServer.test.ts", 9],
    ["model/host/settingsApiKeys.test.ts", 9],
    ["model/service/diskKv.test.ts", 9],
    ["cli/dataDirectoryLock.test.ts", 8],
    ["cli/mcp/mcpManager.test.ts", 8],
    ["model/engine/handoffIntegrity.test.ts", 8],
    ["model/ggufReadBack.test.ts", 8],
    ["model/process/crashRestart.test.ts", 8]
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

/** The seconds a file is expected to hold its lane, worker overhead included. */
export function expectedLaneSeconds(relativePath: string): number {
    const seconds = expectedFileSeconds.get(relativePath.replace(/^test\//, "")) ?? UNLISTED_FILE_SECONDS;
    return seconds + FILE_OVERHEAD_SECONDS;
}
