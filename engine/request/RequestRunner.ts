import type { ReplayLog } from "../audit/ReplayLog.js";
import { requestId as toRequestId, type RequestId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { EngineCounters, GenerateRequest, GenerateResult, KvEngineHooks, RequestTimings, WindowReport } from "../engineTypes.js";
import type { Handoff } from "../handoff/Handoff.js";
import { isIntegrityFailure } from "../handoff/integrityErrors.js";
import type { PagePool } from "../pages/PagePool.js";
import type { TurnScheduler } from "../scheduler/TurnScheduler.js";
import { isPlainGreedy } from "../runtime/SequenceSlot.js";
import type { DiskKvStore } from "../workspace/DiskKvStore.js";
import { reusePrefix } from "../workspace/reusePrefix.js";
import type { WorkspaceRecord } from "../workspace/WorkspaceRecord.js";
import type { WorkspaceTable } from "../workspace/WorkspaceTable.js";
import { admit, type AdmissionPolicy } from "./admission.js";
import type { MemoryEventSink } from "../audit/MemoryEventLog.js";
import { RequestRecord } from "./RequestRecord.js";
import { InvalidRequestError, RequestCancelledError } from "./requestErrors.js";
import type { TerminalStatus } from "./RequestStatus.js";
import { GREEDY, runDecode } from "./runDecode.js";

/** What a request runs through, from the door to its end. */
export interface RequestRunnerParts {
    readonly pool: PagePool;
    readonly window: WindowReport;
    /** New tokens up to this many are evaluated in place in the decode context; more go through the handoff. */
    readonly inPlacePrefillTokens: number;
    /** The streaming demo mode's wait after each token (EngineConfig.tokenDelayMs); 0 waits not at all. */
    readonly tokenDelayMs: number;
    readonly admission: AdmissionPolicy;
    readonly hooks: Pick<KvEngineHooks, "onStatus">;
    readonly counters: EngineCounters;
    readonly scheduler: TurnScheduler;
    readonly workspaces: WorkspaceTable;
    /** Split mode only. */
    readonly handoff: Handoff | undefined;
    readonly replays: ReplayLog;
    /** Where workspaces that keep their KV on disk find it (the engine's `kvDisk`); undefined when none is configured. */
    readonly diskKv: DiskKvStore | undefined;
    /** The memory timeline: refusals at the door, handoffs begun, KV loaded from disk. */
    readonly memoryEvents: MemoryEventSink;
}

/**
 * The request lifecycle: admission at the door, the wait for a turn, prefix reuse, the handoff or
 * an evaluation in place, the decode loop, and exactly one terminal status (I4), which releases
 * the request's pages and is counted. Every step first asks whether the request still lives.
 */
export class RequestRunner {
    readonly #live = new Map<RequestId, RequestRecord>();
    #nextRequest = 1;

    constructor(private readonly parts: RequestRunnerParts) {}

    /** Requests not yet terminal. */
    get numLive(): number {
        return this.#live.size;
    }

    /** Each live request with the generation of the pages it holds now, if any: for the audit. */
    liveGenerations(): Map<RequestId, { generation: number | undefined }> {
        return new Map([...this.#live].map(([id, record]) => [id, { generation: record.heldGeneration }]));
    }

    /**
     * Runs one request to its end; see `KvEngine.generate`. `cancel` is the request's one way to be
     * cancelled: the caller's signal is forwarded to it, and the engine aborts it itself when the
     * workspace is forgotten.
     */
    async run(input: GenerateRequest, cancel: AbortController): Promise<GenerateResult> {
        const { hooks, admission, window } = this.parts;
        const id = input.requestId ?? toRequestId(`req-${this.#nextRequest++}`);
        if (this.#live.has(id)) {
            throw new InvalidRequestError(`A request with requestId ${JSON.stringify(id)} is already running; give each turn its own id.`);
        }
        const record = new RequestRecord(id, input.workspace, this.parts.pool, {
            onStage: (request, status) => hooks.onStatus?.(request, status),
            onTerminal: (done, status) => this.#onTerminal(done, status)
        });
        this.#live.set(id, record);
        const admitted = admit(input.promptTokens.length, input.maxTokens, admission.limitOf(window));
        if (!admitted.ok) {
            const { limit, boundBy } = admission.limitOf(window);
            this.parts.memoryEvents.record({
                kind: "refused",
                workspace: input.workspace,
                requestId: id,
                numTokens: input.promptTokens.length + input.maxTokens,
                outcome: "refused",
                detail:
                    `needs ${input.promptTokens.length} prompt + ${input.maxTokens} answer tokens; ` +
                    `the limit is ${limit} (bound by ${boundBy}); no page was taken`
            });
            return this.#end(record, { kind: "rejected", error: admitted.error });
        }
        if (input.signal?.aborted) {
            return this.#end(record, { kind: "cancelled" });
        }
        const onAbort = (): void => cancel.abort();
        input.signal?.addEventListener("abort", onAbort, { once: true });
        cancel.signal.addEventListener("abort", () => void this.#end(record, { kind: "cancelled" }).catch(() => undefined), {
            once: true
        });
        try {
            return await this.#runTurn(record, input, cancel.signal);
        } finally {
            input.signal?.removeEventListener("abort", onAbort);
        }
    }

    async #runTurn(record: RequestRecord, input: GenerateRequest, signal: AbortSignal): Promise<GenerateResult> {
        const { scheduler, workspaces } = this.parts;
        let workspace: WorkspaceRecord | undefined;
        try {
            const { listener } = input;
            workspace = await scheduler.acquireTurn({
                workspace: input.workspace,
                signal,
                onQueued:
                    listener === undefined ? undefined : (position) => void listener({ type: "queued", requestId: record.id, position })
            });
            record.throwIfEnded();
            void listener?.({ type: "started", requestId: record.id });
            return await this.#run(record, workspace, input);
        } catch (error) {
            const status: TerminalStatus = record.isTerminal
                ? (record.status as TerminalStatus)
                : { kind: "failed", error: error instanceof Error ? error : new Error(String(error)) };
            return await this.#end(record, status);
        } finally {
            if (workspace !== undefined) {
                if (record.status.kind !== "finished" && record.endedDuring !== "decoding") {
                    await workspaces.dropKv(workspace);
                } // a half-done handoff leaves KV the engine cannot vouch for
                scheduler.endTurn(workspace);
            }
        }
    }

    async #run(record: RequestRecord, workspace: WorkspaceRecord, input: GenerateRequest): Promise<GenerateResult> {
        const { counters, handoff } = this.parts;
        const admittedAt = performance.now();
        const timings: RequestTimings = { prefillMs: 0, handoffMs: 0, timeToFirstTokenMs: 0, decodeMs: 0 };
        const prompt = input.promptTokens;
        const slot = await this.parts.workspaces.residentSlot(workspace, record.id);
        // after a restart (or a dropped swap) the workspace's KV may wait on disk: loaded, not prefilled
        const diskKv =
            input.keepKvOnDisk === true && slot.numTokens === 0
                ? await this.parts.diskKv?.restore(workspace.id, slot, record.id)
                : undefined;
        if (diskKv !== undefined) {
            this.parts.memoryEvents.record({
                kind: "loadedFromDisk",
                workspace: workspace.id,
                requestId: record.id,
                numTokens: diskKv.kind === "restored" ? diskKv.numTokens : undefined,
                outcome: diskKv.kind === "restored" ? "ok" : "refused",
                detail:
                    diskKv.kind === "restored"
                        ? `${diskKv.numTokens} tokens loaded from the encrypted file into decode sequence ${slot.index}`
                        : diskKv.reason
            });
        }
        const numReused = await reusePrefix(slot, prompt);
        const delta = prompt.slice(numReused);
        let decodeInput = delta;
        let numHandedOff = 0;
        if (handoff && delta.length - 1 > this.parts.inPlacePrefillTokens) {
            numHandedOff = delta.length - 1;
            this.parts.memoryEvents.record({
                kind: "handoffStarted",
                workspace: workspace.id,
                requestId: record.id,
                numTokens: numHandedOff,
                outcome: "ok",
                detail: `${numHandedOff} tokens to prefill after ${numReused} reused, then through pages to decode sequence ${slot.index}`
            });
            await handoff.run(record, workspace.id, slot, prompt, numReused, timings);
            decodeInput = prompt.slice(-1);
        }
        const decoded = await runDecode(record, slot, decodeInput, input, timings, admittedAt, counters, this.parts.tokenDelayMs);
        if (isPlainGreedy(input.sampling ?? GREEDY)) {
            this.parts.replays.record({
                request: record.id,
                sentByHost: input.requestId !== undefined,
                workspace: workspace.id,
                prompt,
                tokens: decoded.tokens
            });
        }
        counters.reusedPromptTokens += numReused;
        counters.evaluatedPromptTokens += delta.length;
        return {
            request: record.id,
            ...decoded,
            numReusedTokens: numReused,
            numEvaluatedTokens: delta.length,
            numHandedOffTokens: numHandedOff,
            timings,
            ...(diskKv === undefined ? {} : { diskKv })
        };
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
        const { counters, hooks, scheduler } = this.parts;
        this.#live.delete(record.id);
        scheduler.abandonPages(record.id, new RequestCancelledError(record.endedDuring));
        if (status.kind === "failed") {
            counters.failed++;
            counters.integrityFailures += isIntegrityFailure(status.error) ? 1 : 0;
        } else {
            counters[status.kind]++;
        }
        hooks.onStatus?.(record.id, status);
    }
}
