import { auditEngine } from "./audit/auditEngine.js";
import type { AuditOptions, AuditResult } from "./pages/AuditResult.js";
import { ReplayLog, type ServedRequest } from "./audit/ReplayLog.js";
import type { ParsedSequenceState } from "./codec/parseSequenceState.js";
import type { HandoffProgress } from "../contract/EngineSnapshot.js";
import { describeCompute } from "../contract/engineCompute.js";
import type { RequestId, WorkspaceId } from "./core/ids.js";
import type { EngineConfig, EngineConfigInput } from "./EngineConfig.js";
import { startEngineParts, type EngineParts, type EngineStartOptions } from "./EngineParts.js";
import { createEngineCounters, type GenerateRequest, type GenerateResult, type ReplayResult } from "./engineTypes.js";
import { Handoff, pacedHandoff, unpacedHandoff, type PrefillHolder } from "./handoff/Handoff.js";
import { PageTransfer } from "./handoff/PageTransfer.js";
import { watchedTransferHooks, type SealWatcher } from "./handoff/watchedTransferHooks.js";
import { RequestRunner } from "./request/RequestRunner.js";
import { EngineBusyError, EngineStoppedError } from "./request/requestErrors.js";
import type { RoleContext } from "./runtime/RoleContext.js";
import { TurnScheduler } from "./scheduler/TurnScheduler.js";
import type { WorkspaceRecord } from "./workspace/WorkspaceRecord.js";
import { WorkspaceTable } from "./workspace/WorkspaceTable.js";
import { DiskKvStore } from "./workspace/DiskKvStore.js";

export type {
    EngineCounters,
    GenerateRequest,
    GenerateResult,
    KvEngineHooks,
    ModeReport,
    ReplayResult,
    RequestTimings,
    WindowReport
} from "./engineTypes.js";
export { ReplayUnavailableError } from "./audit/ReplayLog.js";

/** A turn of a workspace in flight (queued, running, or a KV export): how to cancel it, and when it has let go of the workspace. */
interface InFlight {
    readonly workspace: WorkspaceId;
    readonly cancel: AbortController;
    readonly settled: Promise<void>;
}

/** The disk store of `parts.config.kvDisk`, bound to this model, KV layout and type, page size and decode context. */
function diskKvStoreFor(parts: EngineParts): DiskKvStore | undefined {
    const { config, decode } = parts;
    if (config.kvDisk === undefined || decode.layout === undefined || decode.numStreams === undefined) {
        return undefined;
    }
    const binding = {
        model: parts.modelFingerprint,
        layout: parts.layoutFingerprint,
        kvCacheType: config.kvCacheType,
        pageTokens: config.pageTokens,
        numStreams: decode.numStreams,
        sequenceCapacity: decode.sequenceCapacity
    };
    return new DiskKvStore(config.kvDisk.directory, Buffer.from(config.kvDisk.key, "base64"), binding, decode);
}

/** Rounds of cancelling a workspace's turns before a forget gives up: a turn can only start again if a caller keeps sending. */
const MAX_FORGET_ROUNDS = 8;

/**
 * The engine core over one loaded model, and its composition root. Its parts live in their own
 * modules: the contexts, pool and measured window (EngineParts.ts), the request lifecycle from
 * admission to its one end with prefix reuse and the decode loop (request/), every grant, eviction
 * and queue decision (scheduler/), where each workspace's KV is (workspace/), the handoff
 * prefill → pages → verified decode in split mode (handoff/), replay and the audit (audit/).
 * This class wires them, and is what engine/service and the tests hold.
 */
export class KvEngine {
    readonly counters = createEngineCounters();
    readonly config: EngineConfig;
    readonly pool: EngineParts["pool"];
    /** The memory timeline: what every part recorded of reservations, handoffs, swaps, scrubs, audits and refusals. */
    readonly memoryEvents: EngineParts["memoryEvents"];
    readonly decode: RoleContext;
    readonly prefill: RoleContext | undefined;
    /** Split mode: the turns every graph of this model computes in, the embedder's too; undefined in unified mode. */
    readonly computeTurns: EngineParts["computeTurns"];
    readonly window: EngineParts["window"];
    readonly mode: EngineParts["mode"];
    readonly layout: EngineParts["layout"];
    readonly modelFingerprint: string;
    /** @internal for engine/service and tests: the loaded model, behind engine/runtime's types. */
    readonly model: EngineParts["model"];
    /** @internal for the fault drills' sandboxes, which share the loaded binding. */
    readonly runtime: EngineParts["runtime"];
    readonly stateDirectory: EngineParts["stateDirectory"];
    readonly compute: EngineParts["compute"];
    /** How states leave and enter llama.cpp in handoffs and swaps ("memory" or "file"), and why. */
    readonly stateExchange: EngineParts["stateExchange"];
    readonly #parts: EngineParts;
    readonly #requests: RequestRunner;
    readonly #inFlight = new Set<InFlight>();
    readonly #sealWatchers = new Set<SealWatcher>();
    readonly #workspaces: WorkspaceTable;
    readonly #scheduler: TurnScheduler;
    readonly #replays: ReplayLog;
    readonly #handoff: Handoff | undefined;
    /** Workspaces' KV on disk (the engine's `kvDisk`); undefined when none is configured or the memory is no plain KV cache. */
    readonly #diskKv: DiskKvStore | undefined;
    /** Writes of finished turns' KV to disk in flight: dispose waits for them. */
    readonly #diskSaves = new Set<Promise<void>>();
    #disposed = false;

    private constructor(parts: EngineParts) {
        this.#parts = parts;
        ({ config: this.config, pool: this.pool, decode: this.decode, prefill: this.prefill, window: this.window } = parts);
        this.computeTurns = parts.computeTurns;
        ({ mode: this.mode, layout: this.layout, modelFingerprint: this.modelFingerprint, model: this.model } = parts);
        ({ runtime: this.runtime, stateDirectory: this.stateDirectory, stateExchange: this.stateExchange, compute: this.compute } = parts);
        const { pool, decode, prefill, hooks, policies, window, memoryEvents } = parts;
        this.memoryEvents = memoryEvents;
        const counters = this.counters;
        const transferHooks = watchedTransferHooks(hooks, this.#sealWatchers);
        const transfer = new PageTransfer(pool, parts.layout, parts.layoutFingerprint, transferHooks, counters, policies.reader);
        const target =
            prefill && decode.layout && decode.numStreams !== undefined
                ? { layout: decode.layout, numStreams: decode.numStreams, verifiesPagesOnLoad: decode.verifiesPagesOnLoad }
                : undefined;
        const workspaces = new WorkspaceTable(decode, pool, transfer, target, counters, () => scheduler.requestSchedule(), memoryEvents);
        const scheduler = new TurnScheduler(workspaces, pool, decode.numSequences);
        const { handoffStepDelayMs } = parts.config;
        const pacing = handoffStepDelayMs > 0 ? pacedHandoff(handoffStepDelayMs) : unpacedHandoff;
        const handoff =
            prefill &&
            new Handoff({ prefill, decode, pool, transfer, pages: scheduler, prefillOverflow: policies.prefillOverflow, hooks, pacing });
        const replays = new ReplayLog(parts.freshContext);
        const diskKv = diskKvStoreFor(parts);
        const { inPlacePrefillTokens, tokenDelayMs } = parts.config;
        this.#requests = new RequestRunner({
            pool,
            window,
            inPlacePrefillTokens,
            tokenDelayMs,
            admission: policies.admission,
            hooks,
            counters,
            scheduler,
            workspaces,
            handoff,
            replays,
            diskKv,
            memoryEvents
        });
        this.#diskKv = diskKv;
        this.#workspaces = workspaces;
        this.#scheduler = scheduler;
        this.#replays = replays;
        this.#handoff = handoff;
    }

    static async start(input: EngineConfigInput, options: EngineStartOptions = {}): Promise<KvEngine> {
        return new KvEngine(await startEngineParts(input, options));
    }

    get modelName(): string {
        return String(this.model.fileInfo.metadata.general?.name ?? this.config.modelPath.split(/[\\/]/).at(-1));
    }

    /** The backend line (contract/engineCompute.ts describeCompute): backend, binary, devices, layers, device memory. */
    get backend(): string {
        return describeCompute(this.compute, this.runtime.llama.maxThreads);
    }

    tokenize(text: string): number[] {
        return this.model.tokenize(text);
    }

    detokenize(tokens: readonly number[]): string {
        return this.model.detokenize(tokens as Parameters<EngineParts["model"]["detokenize"]>[0]);
    }

    get numLiveRequests(): number {
        return this.#requests.numLive;
    }

    get numQueued(): number {
        return this.#scheduler.numQueued;
    }

    /** Prefill sequence `index`'s holder while a handoff uses it (split mode); undefined while it is free. */
    prefillHolder(index: number): PrefillHolder | undefined {
        return this.#handoff?.prefillHolder(index);
    }

    /** Handoffs in flight and the step each is at, oldest first; none in unified mode. */
    handoffs(): readonly HandoffProgress[] {
        return this.#handoff?.progress() ?? [];
    }

    /** The workspaces the engine holds KV for, and where. */
    workspaces(): readonly WorkspaceRecord[] {
        return this.#workspaces.all();
    }

    /** A fresh unified context of one sequence and `contextSize` tokens, nothing else in it: replay's and the canary's baseline. */
    freshContext(contextSize: number): Promise<RoleContext> {
        return this.#parts.freshContext(contextSize);
    }

    /**
     * Forgets a workspace's KV: its decode sequence is cleared and its pages scrubbed. A turn of it
     * that runs or waits is cancelled first (it ends with `request_cancelled`), and the forget
     * waits until it has let go of the workspace.
     */
    async forgetWorkspace(id: WorkspaceId): Promise<void> {
        for (let round = 0; round < MAX_FORGET_ROUNDS; round++) {
            const ending = [...this.#inFlight].filter((turn) => turn.workspace === id);
            if (ending.length === 0) {
                await this.#workspaces.forget(id);
                this.#diskKv?.remove(id); // a deleted or cleared workspace's KV leaves the disk too
                return;
            }
            ending.forEach((turn) => turn.cancel.abort());
            await Promise.all(ending.map((turn) => turn.settled));
        }
        throw new EngineBusyError(
            `Workspace ${id} kept receiving new turns while it was forgotten (${MAX_FORGET_ROUNDS} rounds); forget it again.`
        );
    }

    /** Settles once the writes of workspaces' KV to disk begun so far have ended (each written, or logged as not). */
    async diskKvWritten(): Promise<void> {
        await Promise.all([...this.#diskSaves]);
    }

    /** Forgets every workspace that runs no turn now. */
    async forgetAllWorkspaces(): Promise<void> {
        await this.#workspaces.forgetAll();
    }

    /**
     * Calls `watcher` with every manifest sealed from now on, while its pages are still sealed: how
     * the canary probe (engine/canary/) sees which pages each of its requests wrote and received.
     * Returns the unsubscribe.
     */
    watchSeals(watcher: SealWatcher): () => void {
        this.#sealWatchers.add(watcher);
        return () => void this.#sealWatchers.delete(watcher);
    }

    /**
     * The KV a workspace holds, exported from its decode sequence (swapped back in first when it
     * lives in pages); undefined when it holds none. For the canary probe. It takes a turn of the
     * workspace as a request does, so no turn and no swap moves that KV during the export.
     */
    async exportWorkspaceKv(id: WorkspaceId): Promise<ParsedSequenceState | undefined> {
        this.#assertRunning();
        return this.#track(id, new AbortController(), async () => {
            const workspace = await this.#scheduler.acquireTurn({ workspace: id });
            try {
                const slot = await this.#workspaces.residentSlot(workspace, `export-${id}`);
                return slot.numTokens === 0 ? undefined : await this.decode.exportState(slot, `export-${id}`);
            } finally {
                this.#scheduler.endTurn(workspace);
            }
        });
    }

    /**
     * Runs one request to its end (engine/request/RequestRunner.ts). Resolves only for a request
     * served in full ("stop" or "length"); every other end (rejected, cancelled, failed) rejects with
     * a typed error.
     *
     * `promptTokens` is the whole conversation. KV the workspace already holds for a prefix of it
     * is reused (never evaluated again); short deltas are evaluated in place in the decode context,
     * long ones by prefill and handed over through pages.
     */
    async generate(input: GenerateRequest): Promise<GenerateResult> {
        this.#assertRunning();
        const cancel = new AbortController();
        const result = await this.#track(input.workspace, cancel, () => this.#requests.run(input, cancel));
        if (input.keepKvOnDisk === true && this.#diskKv !== undefined) {
            this.#saveToDisk(input.workspace, this.#diskKv);
        }
        return result;
    }

    /**
     * Writes the workspace's KV to its file after the answer was given, taking a turn of the
     * workspace as a request does (its next turn waits for the write). A workspace swapped out
     * meanwhile keeps its last file, which holds a prefix of its conversation still.
     */
    #saveToDisk(id: WorkspaceId, diskKv: DiskKvStore): void {
        const cancel = new AbortController();
        const saving = this.#track(id, cancel, async () => {
            const workspace = await this.#scheduler.acquireTurn({ workspace: id, signal: cancel.signal });
            try {
                if (workspace.residency.kind === "resident") {
                    await diskKv.save(id, workspace.residency.slot, `disk-${id}`);
                }
            } finally {
                this.#scheduler.endTurn(workspace);
            }
        }).catch((error: unknown) => {
            // the KV stays in memory; the next restart recomputes this workspace
            this.#parts.hooks.onDiskKv?.(id, `not written: ${(error as Error).message}`);
        });
        this.#diskSaves.add(saving);
        void saving.finally(() => this.#diskSaves.delete(saving));
    }

    /** Runs `work` as in flight for `workspace`, so that forgetting the workspace cancels it through `cancel` and waits for it. */
    async #track<T>(workspace: WorkspaceId, cancel: AbortController, work: () => Promise<T>): Promise<T> {
        let settle!: () => void;
        const turn: InFlight = { workspace, cancel, settled: new Promise<void>((resolve) => (settle = resolve)) };
        this.#inFlight.add(turn);
        try {
            return await work();
        } finally {
            this.#inFlight.delete(turn);
            settle();
        }
    }

    #assertRunning(): void {
        if (this.#disposed) {
            throw new EngineStoppedError("The engine has stopped; start it again to run requests.");
        }
    }

    /** Checks I1–I7 over the pool and the engine's own bookkeeping; see `auditEngine`. */
    audit(options: AuditOptions = {}): AuditResult {
        const liveRequests = this.#requests.liveGenerations();
        return auditEngine(
            {
                pool: this.pool,
                workspaces: this.#workspaces.all(),
                liveRequests,
                swapOutsInFlight: this.#workspaces.swapOutsInFlight(),
                numDecodeSequences: this.decode.numSequences
            },
            options
        );
    }

    /** Finished greedy requests that `replay` can check, oldest first, with the host's turn each served. */
    replayable(): readonly ServedRequest[] {
        return this.#replays.all();
    }

    /** The engine's ids of `replayable()`, oldest first. */
    replayableRequests(): readonly RequestId[] {
        return this.#replays.all().map((served) => served.request);
    }

    /** Differential replay (I8) of a finished greedy request, alone in a fresh context; see `ReplayLog`. */
    replay(id: RequestId): Promise<ReplayResult> {
        return this.#replays.replay(id);
    }

    async dispose(): Promise<void> {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        await Promise.all([...this.#diskSaves]);
        this.#scheduler.stop(new EngineStoppedError("The engine stopped before this request's turn came. Retry once it has restarted."));
        await this.prefill?.dispose();
        await this.decode.dispose();
        this.pool.dispose();
        this.stateDirectory.dispose();
        await this.#parts.draftModel?.dispose(); // after the contexts, whose draft contexts are its
        await this.model.dispose();
        if (this.#parts.ownsRuntime) {
            await this.runtime.dispose();
        }
    }
}
