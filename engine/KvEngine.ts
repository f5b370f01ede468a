import { invariant } from "./core/invariant.js";
import { requestId as toRequestId, type RequestId, type WorkspaceId } from "./core/ids.js";
import { KvaultError } from "./core/KvaultError.js";
import { bytesPerToken, describeLayoutMismatch, layoutFingerprint, type KvLayout } from "./codec/KvLayout.js";
import { StateLayoutMismatchError } from "./codec/codecErrors.js";
import { CapacityConfigError, resolveEngineConfig, type EngineConfig, type EngineConfigInput } from "./EngineConfig.js";
import { HandoffIntegrityError } from "./handoff/integrityErrors.js";
import { PageTransfer } from "./handoff/PageTransfer.js";
import { watchedTransferHooks, type SealWatcher } from "./handoff/watchedTransferHooks.js";
import { productionPolicies, type EnginePolicies } from "./EnginePolicies.js";
import { modelFingerprint } from "./model/modelFingerprint.js";
import { PagePool } from "./pages/PagePool.js";
import { admit, requestLimit, type MeasuredCapacities } from "./request/admission.js";
import { RequestRecord } from "./request/RequestRecord.js";
import { EngineBusyError, EngineStoppedError, RequestCancelledError } from "./request/requestErrors.js";
import type { RequestStatus, TerminalStatus } from "./request/RequestStatus.js";
import { LlamaRuntime } from "./runtime/LlamaRuntime.js";
import { PrivateStateDirectory } from "./runtime/PrivateStateDirectory.js";
import { LlamaRoleContext } from "./runtime/LlamaRoleContext.js";
import type { RoleContext } from "./runtime/RoleContext.js";
import { describeModelMemory } from "./runtime/describeModelMemory.js";
import type { SamplingOptions, SequenceSlot, TokenProbabilities } from "./runtime/SequenceSlot.js";
import { FairQueue, type QueueEntry } from "./scheduler/FairQueue.js";
import type { WorkspaceRecord } from "./workspace/WorkspaceRecord.js";
import { WorkspaceTable } from "./workspace/WorkspaceTable.js";
import type { ParsedSequenceState } from "./codec/parseSequenceState.js";
import type { LlamaModel } from "./runtime/types.js";
import type {
    EngineCounters,
    GenerateRequest,
    GenerateResult,
    KvEngineHooks,
    ModeReport,
    ReplayResult,
    RequestTimings,
    WindowReport
} from "./engineTypes.js";
import { auditEngine, type EngineAuditOptions, type EngineAuditResult } from "./audit/auditEngine.js";

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

/** Longest a handoff waits for pages that running transfers hold. */
const PAGE_WAIT_MS = 60_000;

/** Finished greedy requests kept for differential replay. */
const NUM_REPLAYABLE_REQUESTS = 64;

/** Replay was asked of a request the engine cannot replay. */
export class ReplayUnavailableError extends KvaultError {
    readonly code = "replay_unavailable";
}

interface Waiter extends QueueEntry {
    readonly grant: () => void;
    readonly fail: (error: Error) => void;
}

const GREEDY: SamplingOptions = { temperature: 0 };

/**
 * The engine core over one loaded model: admission at the door, prefill → pages → verified
 * handoff → decode in split mode, or one context in unified mode (ARCHITECTURE.md, The engine).
 */
export class KvEngine {
    readonly counters: EngineCounters = {
        finished: 0,
        rejected: 0,
        cancelled: 0,
        failed: 0,
        integrityFailures: 0,
        swapOuts: 0,
        swapIns: 0,
        swapDrops: 0,
        generatedTokens: 0,
        evaluatedPromptTokens: 0,
        reusedPromptTokens: 0,
        staleCompletionsIgnored: 0
    };
    readonly #requests = new Map<RequestId, RequestRecord>();
    readonly #replayable = new Map<RequestId, { readonly prompt: readonly number[]; readonly tokens: readonly number[] }>();
    readonly #workspaces: WorkspaceTable;
    readonly #queue = new FairQueue<Waiter>();
    readonly #transfer: PageTransfer;
    readonly #sealWatchers = new Set<SealWatcher>();
    #numRunning = 0;
    #numArrivals = 0;
    #clock = 0;
    #prefillLock: Promise<void> = Promise.resolve();
    #nextRequest = 1;
    #disposed = false;

    private constructor(
        readonly config: EngineConfig,
        /** @internal for the fault drills' sandboxes, which share the loaded binding. */
        readonly runtime: LlamaRuntime,
        private readonly ownsRuntime: boolean,
        /** @internal for engine/service and tests: the loaded model, behind engine/runtime's types. */
        readonly model: LlamaModel,
        readonly modelFingerprint: string,
        readonly layout: KvLayout,
        readonly layoutFingerprint: string,
        readonly pool: PagePool,
        readonly stateDirectory: PrivateStateDirectory,
        /** The context that generates: decode in split mode, the unified context otherwise. */
        readonly decode: RoleContext,
        readonly prefill: RoleContext | undefined,
        readonly window: WindowReport,
        readonly mode: ModeReport,
        private readonly hooks: KvEngineHooks,
        /** The production ones, except in a fault drill's sandbox. */
        private readonly policies: EnginePolicies
    ) {
        this.#transfer = new PageTransfer(
            pool,
            layout,
            layoutFingerprint,
            watchedTransferHooks(hooks, this.#sealWatchers),
            this.counters,
            policies.reader
        );
        this.#workspaces = new WorkspaceTable(
            decode,
            pool,
            this.#transfer,
            prefill && decode.layout && decode.numStreams !== undefined
                ? { layout: decode.layout, numStreams: decode.numStreams }
                : undefined,
            this.counters,
            () => this.#grantNext()
        );
    }

    /**
     * `policies` exists for fault drills alone (engine/drills/runFaultDrill.ts): a drill's sandboxed
     * engine swaps one for its leaky variant to show the leak its guard prevents. Nothing else
     * passes it; the engine process and its protocol cannot.
     */
    static async start(
        input: EngineConfigInput,
        options: { runtime?: LlamaRuntime; hooks?: KvEngineHooks; policies?: Partial<EnginePolicies> } = {}
    ): Promise<KvEngine> {
        const policies: EnginePolicies = { ...productionPolicies, ...options.policies };
        const config = resolveEngineConfig(input);
        const runtime = options.runtime ?? (await LlamaRuntime.start({ gpu: config.gpu, maxThreads: config.threads }));
        const cleanup: (() => Promise<void> | void)[] = options.runtime ? [] : [() => runtime.dispose()];
        try {
            const fingerprint = modelFingerprint(config.modelPath);
            const model = await runtime.loadModel(config.modelPath);
            cleanup.unshift(() => model.dispose());
            const stateDirectory = PrivateStateDirectory.create(config.stateRoot);
            cleanup.unshift(() => stateDirectory.dispose());

            const memory = describeModelMemory(model);
            const mode: ModeReport =
                config.mode === "split" && !memory.plainKvCache
                    ? { requested: "split", effective: "unified", reason: `Running unified (no prefill/decode split): ${memory.reason}.` }
                    : { requested: config.mode, effective: config.mode };
            const split = mode.effective === "split";

            const decode = await LlamaRoleContext.create(
                model,
                {
                    role: split ? "decode" : "unified",
                    contextSize: config.decodeContextSize,
                    numSequences: config.numDecodeSequences,
                    batchSize: config.batchSize,
                    flashAttention: config.flashAttention,
                    threads: config.threads
                },
                stateDirectory
            );
            cleanup.unshift(() => decode.dispose());
            const prefill = split
                ? await LlamaRoleContext.create(
                      model,
                      {
                          role: "prefill",
                          contextSize: config.prefillContextSize,
                          numSequences: 1,
                          batchSize: config.batchSize,
                          flashAttention: config.flashAttention,
                          threads: config.threads
                      },
                      stateDirectory
                  )
                : undefined;
            if (prefill) {
                cleanup.unshift(() => prefill.dispose());
                invariant(
                    prefill.layout && decode.layout && prefill.numStreams !== undefined && decode.numStreams !== undefined,
                    "split mode needs both contexts' KV layouts measured"
                );
                const mismatch = describeLayoutMismatch(decode.layout, prefill.layout);
                if (mismatch !== undefined) {
                    throw new StateLayoutMismatchError(`prefill and decode contexts differ: ${mismatch}`);
                }
            }

            // Unified mode over a memory pages cannot hold gets an empty layout: its pool is never used.
            const layout: KvLayout = decode.layout ?? { vTransposed: false, layers: [] };
            const pageBytes = Math.max(1, config.pageTokens * bytesPerToken(layout));
            const pool = new PagePool({ numPages: config.numPages, pageTokens: config.pageTokens, pageBytes }, policies);
            cleanup.unshift(() => pool.dispose());

            const capacities: MeasuredCapacities = {
                window: config.window,
                prefill: prefill?.sequenceCapacity ?? decode.sequenceCapacity,
                decode: decode.sequenceCapacity,
                pool: split ? config.numPages * config.pageTokens : Number.MAX_SAFE_INTEGER
            };
            const limit = requestLimit(capacities);
            const clamped = limit.boundBy !== "window";
            if (clamped && config.onWindowAboveCapacity === "refuse") {
                throw new CapacityConfigError(
                    `The window is set to ${config.window.toLocaleString("en-US")} tokens, but the measured ${limit.boundBy} capacity is ` +
                        `${limit.limit.toLocaleString("en-US")}. Lower the window to ${limit.limit.toLocaleString("en-US")} or give the ${limit.boundBy} ${limit.boundBy === "pool" ? "more pages" : "a larger context"}.`
                );
            }
            const window: WindowReport = { ...limit, configured: config.window, clamped, capacities };

            return new KvEngine(
                config,
                runtime,
                options.runtime === undefined,
                model,
                fingerprint,
                layout,
                layoutFingerprint(layout, fingerprint),
                pool,
                stateDirectory,
                decode,
                prefill,
                window,
                mode,
                options.hooks ?? {},
                policies
            );
        } catch (error) {
            for (const step of cleanup) {
                await step();
            }
            throw error;
        }
    }

    get modelName(): string {
        return String(this.model.fileInfo.metadata.general?.name ?? this.config.modelPath.split(/[\\/]/).at(-1));
    }

    get backend(): string {
        return this.runtime.describe();
    }

    tokenize(text: string): number[] {
        return this.model.tokenize(text);
    }

    detokenize(tokens: readonly number[]): string {
        return this.model.detokenize(tokens as Parameters<LlamaModel["detokenize"]>[0]);
    }

    get numLiveRequests(): number {
        return this.#requests.size;
    }

    get numQueued(): number {
        return this.#queue.length;
    }

    /** The workspaces the engine holds KV for, and where. */
    workspaces(): readonly WorkspaceRecord[] {
        return this.#workspaces.all();
    }

    /** Forgets a workspace's KV: its decode sequence is cleared and its pages scrubbed. Not while a turn of it runs. */
    async forgetWorkspace(id: WorkspaceId): Promise<void> {
        await this.#workspaces.forget(id);
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
        if (this.#disposed) {
            throw new EngineStoppedError("The engine has stopped; start it again to run requests.");
        }
        const workspace = await this.#waitForTurn({ workspace: id, promptTokens: [], maxTokens: 1 });
        try {
            const slot = await this.#workspaces.residentSlot(`export-${id}`, workspace);
            return slot.numTokens === 0 ? undefined : await this.decode.exportState(slot, `export-${id}`);
        } finally {
            workspace.busy = false;
            workspace.lastUsed = ++this.#clock;
            this.#numRunning--;
            this.#grantNext();
        }
    }

    async forgetAllWorkspaces(): Promise<void> {
        await this.#workspaces.forgetAll();
    }

    /**
     * Runs one request to its end. Resolves only for a request served in full ("stop" or "length");
     * every other end (rejected, cancelled, failed) rejects with a typed error.
     *
     * `promptTokens` is the whole conversation. KV the workspace already holds for a prefix of it
     * is reused (never evaluated again); short deltas are evaluated in place in the decode context,
     * long ones by prefill and handed over through pages.
     */
    async generate(input: GenerateRequest): Promise<GenerateResult> {
        if (this.#disposed) {
            throw new EngineStoppedError("The engine has stopped; start it again to run requests.");
        }
        const id = toRequestId(`req-${this.#nextRequest++}`);
        const record = new RequestRecord(id, input.workspace, this.pool, (done, status) => this.#onTerminal(done, status));
        this.#requests.set(id, record);

        const admission = admit(input.promptTokens.length, input.maxTokens, this.policies.admission.limitOf(this.window));
        if (!admission.ok) {
            return this.#end(record, { kind: "rejected", error: admission.error });
        }
        if (input.signal?.aborted) {
            return this.#end(record, { kind: "cancelled" });
        }

        const onAbort = (): void => void this.#end(record, { kind: "cancelled" }).catch(() => undefined);
        input.signal?.addEventListener("abort", onAbort, { once: true });
        let workspace: WorkspaceRecord | undefined;
        try {
            workspace = await this.#waitForTurn(input);
            this.#throwIfEnded(record);
            input.onStarted?.();
            return await this.#run(record, workspace, input);
        } catch (error) {
            if (record.isTerminal) {
                return await this.#end(record, record.status as TerminalStatus);
            }
            return await this.#end(record, { kind: "failed", error: error instanceof Error ? error : new Error(String(error)) });
        } finally {
            input.signal?.removeEventListener("abort", onAbort);
            if (workspace !== undefined) {
                if (record.status.kind !== "finished" && record.endedDuring !== "decoding") {
                    await this.#workspaces.dropKv(workspace);
                } // a half-done handoff leaves KV the engine cannot vouch for
                workspace.busy = false;
                workspace.lastUsed = ++this.#clock;
                this.#numRunning--;
                this.#grantNext();
            }
        }
    }

    /**
     * Waits, fairly across workspaces, until a decode sequence can be given to this request, and
     * takes it: the run count and the workspace's busy mark change in the same synchronous step as
     * the grant, so two grants can never share a workspace or overcommit the sequences. Throws only
     * before a grant; after one, the caller owns the turn and must end it.
     */
    async #waitForTurn(input: GenerateRequest): Promise<WorkspaceRecord> {
        const take = (): WorkspaceRecord => {
            const workspace = this.#workspaces.get(input.workspace);
            invariant(
                !workspace.busy && this.#numRunning < this.decode.numSequences,
                () =>
                    `a turn of ${input.workspace} was granted with the workspace busy or ${this.#numRunning} of ${this.decode.numSequences} sequences running`
            );
            workspace.busy = true;
            this.#numRunning++;
            return workspace;
        };
        const busy = this.#busyWorkspaces();
        if (this.#queue.length === 0 && this.#numRunning < this.decode.numSequences && !busy.has(input.workspace)) {
            return take();
        }
        return new Promise<WorkspaceRecord>((resolve, reject) => {
            const waiter: Waiter = {
                workspace: input.workspace,
                arrival: this.#numArrivals++,
                grant: () => {
                    input.signal?.removeEventListener("abort", leave);
                    resolve(take());
                },
                fail: (error) => {
                    input.signal?.removeEventListener("abort", leave);
                    reject(error);
                }
            };
            const leave = (): void => {
                if (this.#queue.remove(waiter)) {
                    reject(new RequestCancelledError("admitted"));
                }
            };
            this.#queue.push(waiter);
            input.signal?.addEventListener("abort", leave, { once: true });
            input.onQueued?.(this.#queue.positionOf(waiter, busy));
        });
    }

    #grantNext(): void {
        while (this.#numRunning < this.decode.numSequences) {
            const next = this.#queue.next(this.#busyWorkspaces());
            if (next === undefined) {
                return;
            }
            next.grant();
        }
    }

    #busyWorkspaces(): Set<WorkspaceId> {
        return new Set(
            this.#workspaces
                .all()
                .filter((workspace) => workspace.busy)
                .map((workspace) => workspace.id)
        );
    }

    async #run(record: RequestRecord, workspace: WorkspaceRecord, input: GenerateRequest): Promise<GenerateResult> {
        const admittedAt = performance.now();
        const timings: RequestTimings = { prefillMs: 0, handoffMs: 0, timeToFirstTokenMs: 0, decodeMs: 0 };
        const prompt = input.promptTokens;
        const slot = await this.#workspaces.residentSlot(record.id, workspace);

        // Reuse what the workspace's KV already holds; at least the last prompt token is evaluated,
        // because its logits give the first answer token.
        const held = slot.tokens;
        let numReused = 0;
        while (numReused < held.length && numReused < prompt.length - 1 && held[numReused] === prompt[numReused]) {
            numReused++;
        }
        await slot.truncate(numReused);
        const delta = prompt.slice(numReused);

        let decodeInput = delta;
        let numHandedOff = 0;
        if (this.prefill && delta.length - 1 > this.config.inPlacePrefillTokens) {
            numHandedOff = delta.length - 1;
            await this.#handOff(record, workspace, slot, prompt, numReused, timings);
            decodeInput = prompt.slice(-1);
        }
        const result = await this.#decode(record, slot, decodeInput, input, timings, admittedAt);
        if ((input.sampling ?? GREEDY).temperature === 0) {
            this.#replayable.set(record.id, { prompt: [...prompt], tokens: result.tokens });
            if (this.#replayable.size > NUM_REPLAYABLE_REQUESTS) {
                this.#replayable.delete(this.#replayable.keys().next().value!);
            }
        }
        this.counters.reusedPromptTokens += numReused;
        this.counters.evaluatedPromptTokens += delta.length;
        return { ...result, numReusedTokens: numReused, numEvaluatedTokens: delta.length, numHandedOffTokens: numHandedOff };
    }

    /**
     * Prefill evaluates `prompt[numReused, n − 1)` on top of the workspace's history and hands the
     * whole sequence back through pages; decode verifies and loads it, then evaluates the last token.
     * The prefill context has one sequence: handoffs take turns.
     */
    async #handOff(
        record: RequestRecord,
        workspace: WorkspaceRecord,
        slot: SequenceSlot,
        prompt: readonly number[],
        numReused: number,
        timings: RequestTimings
    ): Promise<void> {
        const prefill = this.prefill!;
        const startedAt = performance.now();
        let exported: ParsedSequenceState;
        // The prefill context has one sequence: prefills take turns; transfers to decode do not wait on each other.
        const unlock = await this.#lockPrefill();
        const prefillSlot = prefill.acquireSequence()!;
        try {
            this.#advance(record, { kind: "prefilling" });
            if (numReused > 0) {
                // the history the workspace holds goes to prefill through pages, not by recompute
                await this.#movePages(record, workspace, await this.decode.exportState(slot, record.id), prefill, prefillSlot);
            }
            const prefillStartedAt = performance.now();
            const toEvaluate = prompt.slice(numReused, -1);
            await prefill.evaluate(
                prefillSlot,
                this.policies.prefillOverflow.tokensToEvaluate(
                    toEvaluate,
                    prefillSlot.numTokens,
                    prefill.sequenceCapacity,
                    this.config.pageTokens
                )
            );
            timings.prefillMs = performance.now() - prefillStartedAt;
            this.#advance(record, { kind: "transferring" });
            exported = await prefill.exportState(prefillSlot, record.id);
        } finally {
            await prefill.releaseSequence(prefillSlot);
            unlock();
        }
        this.#throwIfEnded(record);
        await this.#movePages(record, workspace, exported, this.decode, slot, prompt.slice(0, -1));
        invariant(
            slot.numTokens === prompt.length - 1,
            () => `decode sequence ${slot.index} holds ${slot.numTokens} tokens after loading ${prompt.length - 1}`
        );
        timings.handoffMs = performance.now() - startedAt - timings.prefillMs;
    }

    async #lockPrefill(): Promise<() => void> {
        let unlock!: () => void;
        const previous = this.#prefillLock;
        this.#prefillLock = new Promise<void>((resolve) => {
            unlock = resolve;
        });
        await previous;
        return unlock;
    }

    /**
     * One verified transfer through the pool: reserve, write and seal, verify, assemble, load, release.
     * The reader reserves for the tokens it expects (by default, those the state says it holds) and
     * verifies what arrived against them, never against what the writer claims.
     */
    async #movePages(
        record: RequestRecord,
        workspace: WorkspaceRecord,
        state: ParsedSequenceState,
        target: RoleContext,
        targetSlot: SequenceSlot,
        expectedTokens: readonly number[] = Array.from(state.tokens)
    ): Promise<void> {
        const numPages = this.#transfer.numPagesFor(expectedTokens.length);
        await this.#waitForPages(record, numPages);
        // Cancelled while the state was exported or pages awaited: reserve nothing. From here to
        // holdPages there is no await, so a reservation always has its owner.
        this.#throwIfEnded(record);
        const reservation = this.pool.reserve({ workspace: workspace.id, request: record.id, numPages, firstToken: 0 });
        record.holdPages(reservation);
        const manifest = await this.#transfer.write(reservation, state);
        this.#throwIfEnded(record);
        const assembled = this.#transfer.read(
            manifest,
            {
                request: record.id,
                workspace: workspace.id,
                generation: reservation.generation,
                tokens: expectedTokens,
                reservedPages: reservation.pages.map((handle) => handle.pageId)
            },
            this.#target(target)
        );
        this.#throwIfEnded(record);
        await target.importState(targetSlot, assembled, record.id);
        this.hooks.afterLoad?.(record.id, targetSlot.tokens);
        record.releasePages();
    }

    /**
     * Waits until `numPages` can be reserved. Admission bounded every request by the pool's size,
     * and other handoffs hold their pages only for the moment of a transfer, so room comes; the
     * wait is bounded all the same, and a cancel ends it.
     */
    async #waitForPages(record: RequestRecord, numPages: number): Promise<void> {
        const deadline = performance.now() + PAGE_WAIT_MS;
        while (!this.#workspaces.makeRoom(numPages)) {
            this.#throwIfEnded(record);
            if (performance.now() > deadline) {
                throw new EngineBusyError(
                    `The handoff needs ${numPages} pages and only ${this.pool.numFreePages} of ${this.config.numPages} came free in ` +
                        `${PAGE_WAIT_MS / 1000} s (running requests hold the rest). Retry, or give the pool more pages.`
                );
            }
            await new Promise((resolve) => setTimeout(resolve, 5));
        }
    }

    #target(context: RoleContext): { layout: KvLayout; numStreams: number } {
        invariant(
            context.layout !== undefined && context.numStreams !== undefined,
            () => `the ${context.role} context has no measured KV layout`
        );
        return { layout: context.layout, numStreams: context.numStreams };
    }

    async #decode(
        record: RequestRecord,
        slot: SequenceSlot,
        tokens: readonly number[],
        input: GenerateRequest,
        timings: RequestTimings,
        admittedAt: number
    ): Promise<Pick<GenerateResult, "request" | "tokens" | "finishReason" | "timings">> {
        this.#advance(record, { kind: "decoding" });
        const generated: number[] = [];
        let finishReason: "stop" | "length" = "stop";
        let firstTokenAt = performance.now();
        let probabilities: TokenProbabilities | undefined;
        const wantProbabilities =
            input.logprobs === undefined
                ? undefined
                : {
                      top: input.logprobs.top,
                      onToken: (entry: TokenProbabilities) => {
                          probabilities = entry;
                      }
                  };
        for await (const token of slot.generate(tokens, input.sampling ?? GREEDY, wantProbabilities)) {
            this.#throwIfEnded(record);
            if (generated.length === 0) {
                firstTokenAt = performance.now();
                timings.timeToFirstTokenMs = firstTokenAt - admittedAt;
            }
            generated.push(token);
            this.counters.generatedTokens++;
            if (input.onToken?.(token, probabilities) === "stop") {
                break;
            }
            if (generated.length >= input.maxTokens) {
                finishReason = "length";
                break;
            }
        }
        this.#throwIfEnded(record);
        timings.decodeMs = performance.now() - firstTokenAt;
        record.finish({ kind: "finished", reason: finishReason });
        return { request: record.id, tokens: generated, finishReason, timings };
    }

    #advance(record: RequestRecord, status: Extract<RequestStatus, { kind: "prefilling" | "transferring" | "decoding" }>): void {
        if (!record.advance(status)) {
            this.#throwIfEnded(record);
        }
        this.hooks.onStatus?.(record.id, status);
    }

    #throwIfEnded(record: RequestRecord): void {
        if (record.isTerminal) {
            throw new RequestCancelledError(record.endedDuring);
        }
    }

    /** Moves a request to its terminal status (once) and turns every non-normal end into a thrown error. */
    async #end(record: RequestRecord, status: TerminalStatus): Promise<never> {
        record.finish(status);
        const final = record.status as TerminalStatus;
        switch (final.kind) {
            case "rejected":
            case "failed":
                throw final.error;
            case "cancelled":
                throw new RequestCancelledError(record.endedDuring);
            case "finished":
                invariant(false, `request ${record.id} ended as finished on an error path`);
        }
    }

    #onTerminal(record: RequestRecord, status: TerminalStatus): void {
        this.#requests.delete(record.id);
        if (status.kind === "finished") {
            this.counters.finished++;
        } else if (status.kind === "rejected") {
            this.counters.rejected++;
        } else if (status.kind === "cancelled") {
            this.counters.cancelled++;
        } else {
            this.counters.failed++;
            if (
                status.error instanceof HandoffIntegrityError ||
                (status.error instanceof KvaultError && /checksum|stale|mismatch/.test(status.error.code))
            ) {
                this.counters.integrityFailures++;
            }
        }
        this.hooks.onStatus?.(record.id, status);
    }

    /** Checks I1–I7 over the pool and the engine's own bookkeeping; see `auditEngine`. */
    audit(options: EngineAuditOptions = {}): EngineAuditResult {
        const liveRequests = new Map<RequestId, { generation: number | undefined }>();
        for (const [id, record] of this.#requests) {
            liveRequests.set(id, { generation: record.heldGeneration });
        }
        return auditEngine(
            { pool: this.pool, workspaces: this.#workspaces.all(), liveRequests, numDecodeSequences: this.decode.numSequences },
            options
        );
    }

    /** Finished greedy requests that `replay` can check, oldest first. */
    replayableRequests(): readonly RequestId[] {
        return [...this.#replayable.keys()];
    }

    /**
     * Differential replay (I8): recomputes a finished greedy request alone, in a fresh context of
     * its own with one sequence, and compares token by token with what was served.
     */
    async replay(id: RequestId): Promise<ReplayResult> {
        const served = this.#replayable.get(id);
        if (served === undefined) {
            throw new ReplayUnavailableError(
                `Request ${id} cannot be replayed: only the last ${NUM_REPLAYABLE_REQUESTS} finished greedy (temperature 0) requests are kept.`
            );
        }
        const startedAt = performance.now();
        const context = await LlamaRoleContext.create(
            this.model,
            {
                role: "unified",
                contextSize: served.prompt.length + served.tokens.length + 1,
                numSequences: 1,
                flashAttention: this.config.flashAttention,
                threads: this.config.threads
            },
            this.stateDirectory
        );
        try {
            const slot = context.acquireSequence()!;
            const replayed: number[] = [];
            if (served.tokens.length > 0) {
                for await (const token of slot.generate(served.prompt, GREEDY)) {
                    replayed.push(token);
                    if (replayed.length >= served.tokens.length) {
                        break;
                    }
                }
            }
            const index = served.tokens.findIndex((token, position) => replayed[position] !== token);
            return {
                request: id,
                numTokens: served.tokens.length,
                identical: index < 0,
                ...(index < 0 ? {} : { firstDivergence: { index, served: served.tokens[index]!, replayed: replayed[index] } }),
                durationMs: performance.now() - startedAt
            };
        } finally {
            await context.dispose();
        }
    }

    async dispose(): Promise<void> {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        for (const waiter of this.#queue.order(new Set())) {
            this.#queue.remove(waiter);
            waiter.fail(new EngineStoppedError("The engine stopped before this request's turn came. Retry once it has restarted."));
        }
        await this.prefill?.dispose();
        await this.decode.dispose();
        this.pool.dispose();
        this.stateDirectory.dispose();
        await this.model.dispose();
        if (this.ownsRuntime) {
            await this.runtime.dispose();
        }
    }
}
