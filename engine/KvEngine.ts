import { invariant } from "./core/invariant.js";
import { requestId as toRequestId, type RequestId, type SessionId } from "./core/ids.js";
import { KvaultError } from "./core/KvaultError.js";
import { bytesPerToken, describeLayoutMismatch, layoutFingerprint, type KvLayout } from "./codec/KvLayout.js";
import { StateLayoutMismatchError } from "./codec/codecErrors.js";
import { assembleSequenceState, numPagesFor, scatterStateToPages, type PageBlockAccess } from "./codec/statePages.js";
import { CapacityConfigError, resolveEngineConfig, type EngineConfig, type EngineConfigInput, type EngineMode } from "./EngineConfig.js";
import { HandoffIntegrityError } from "./handoff/integrityErrors.js";
import type { PageManifest } from "./handoff/PageManifest.js";
import { verifyManifest } from "./handoff/verifyManifest.js";
import { modelFingerprint } from "./model/modelFingerprint.js";
import type { PageReadLease, PageWriteLease } from "./pages/PageLease.js";
import { PagePool } from "./pages/PagePool.js";
import { admit, requestLimit, type MeasuredCapacities, type RequestLimit } from "./request/admission.js";
import { RequestRecord } from "./request/RequestRecord.js";
import { EngineBusyError, EngineStoppedError, RequestCancelledError } from "./request/requestErrors.js";
import type { RequestStatus, TerminalStatus } from "./request/RequestStatus.js";
import { LlamaRuntime } from "./runtime/LlamaRuntime.js";
import { PrivateStateDirectory } from "./runtime/PrivateStateDirectory.js";
import { RoleContext } from "./runtime/RoleContext.js";
import { describeModelMemory } from "./runtime/describeModelMemory.js";
import type { SamplingOptions, SequenceSlot } from "./runtime/SequenceSlot.js";
import type { LlamaModel } from "./runtime/types.js";

export interface GenerateRequest {
    readonly session: SessionId;
    readonly promptTokens: readonly number[];
    readonly maxTokens: number;
    readonly sampling?: SamplingOptions;
    readonly signal?: AbortSignal;
    readonly onToken?: (token: number) => void;
}

export interface GenerateResult {
    readonly request: RequestId;
    readonly tokens: readonly number[];
    readonly finishReason: "stop" | "length";
    /** Prompt tokens evaluated by prefill and handed off through pages (0 in unified mode). */
    readonly numHandedOffTokens: number;
    readonly timings: RequestTimings;
}

/** Milliseconds, from `performance.now()`. */
export interface RequestTimings {
    /** Prefill evaluation of the handed-off prompt (0 in unified mode). */
    prefillMs: number;
    /** Export, page writes and seals, verification, assembly and load into decode (0 in unified mode). */
    handoffMs: number;
    /** From admission to the first generated token. */
    timeToFirstTokenMs: number;
    /** From the first generated token to the last. */
    decodeMs: number;
}

/** The window as configured and as served, and which measured capacity set it. */
export interface WindowReport extends RequestLimit {
    readonly configured: number;
    readonly clamped: boolean;
    readonly capacities: MeasuredCapacities;
}

/** The mode asked for and the mode running; they differ when the model's memory cannot be paged. */
export interface ModeReport {
    readonly requested: EngineMode;
    readonly effective: EngineMode;
    /** Why the engine runs unified although split was asked for: shown to the user. */
    readonly reason?: string;
}

export interface EngineCounters {
    finished: number;
    rejected: number;
    cancelled: number;
    failed: number;
    integrityFailures: number;
}

/**
 * Test and drill hooks. They run at the points the failure modes of this class strike; production
 * passes none. Hooks change nothing by themselves: what they provoke, the guards must catch.
 */
export interface KvEngineHooks {
    /** Called after the write leases are taken and before the bytes are written: a slow transport. */
    beforeTransferWrite?(request: RequestId): Promise<void>;
    /** Called with the manifest as prefill sealed it; what it returns is what decode receives. */
    afterSeal?(manifest: PageManifest, pool: PagePool): PageManifest | void;
    onStatus?(request: RequestId, status: RequestStatus): void;
}

const GREEDY: SamplingOptions = { temperature: 0 };

/**
 * The engine core over one loaded model: admission at the door, prefill → pages → verified
 * handoff → decode in split mode, or one context in unified mode (ARCHITECTURE.md, The engine).
 */
export class KvEngine {
    readonly counters: EngineCounters = { finished: 0, rejected: 0, cancelled: 0, failed: 0, integrityFailures: 0 };
    readonly #requests = new Map<RequestId, RequestRecord>();
    #nextRequest = 1;
    #disposed = false;

    private constructor(
        readonly config: EngineConfig,
        private readonly runtime: LlamaRuntime,
        private readonly ownsRuntime: boolean,
        private readonly model: LlamaModel,
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
        private readonly hooks: KvEngineHooks
    ) {}

    static async start(input: EngineConfigInput, options: { runtime?: LlamaRuntime; hooks?: KvEngineHooks } = {}): Promise<KvEngine> {
        const config = resolveEngineConfig(input);
        const runtime = options.runtime ?? await LlamaRuntime.start({ gpu: config.gpu, maxThreads: config.threads });
        const cleanup: (() => Promise<void> | void)[] = options.runtime ? [] : [() => runtime.dispose()];
        try {
            const fingerprint = modelFingerprint(config.modelPath);
            const model = await runtime.loadModel(config.modelPath);
            cleanup.unshift(() => model.dispose());
            const stateDirectory = PrivateStateDirectory.create();
            cleanup.unshift(() => stateDirectory.dispose());

            const memory = describeModelMemory(model);
            const mode: ModeReport = config.mode === "split" && !memory.plainKvCache
                ? { requested: "split", effective: "unified", reason: `Running unified (no prefill/decode split): ${memory.reason}.` }
                : { requested: config.mode, effective: config.mode };
            const split = mode.effective === "split";

            const decode = await RoleContext.create(model, {
                role: split ? "decode" : "unified",
                contextSize: config.decodeContextSize,
                numSequences: config.numDecodeSequences,
                batchSize: config.batchSize,
                flashAttention: config.flashAttention,
                threads: config.threads
            }, stateDirectory);
            cleanup.unshift(() => decode.dispose());
            const prefill = split
                ? await RoleContext.create(model, {
                    role: "prefill",
                    contextSize: config.prefillContextSize,
                    numSequences: 1,
                    batchSize: config.batchSize,
                    flashAttention: config.flashAttention,
                    threads: config.threads
                }, stateDirectory)
                : undefined;
            if (prefill) {
                cleanup.unshift(() => prefill.dispose());
                invariant(prefill.layout && decode.layout && prefill.numStreams !== undefined && decode.numStreams !== undefined,
                    "split mode needs both contexts' KV layouts measured");
                const mismatch = describeLayoutMismatch(decode.layout, prefill.layout);
                if (mismatch !== undefined)
                    throw new StateLayoutMismatchError(`prefill and decode contexts differ: ${mismatch}`);
            }

            // Unified mode over a memory pages cannot hold gets an empty layout: its pool is never used.
            const layout: KvLayout = decode.layout ?? { vTransposed: false, layers: [] };
            const pageBytes = Math.max(1, config.pageTokens * bytesPerToken(layout));
            const pool = new PagePool({ numPages: config.numPages, pageTokens: config.pageTokens, pageBytes });
            cleanup.unshift(() => pool.dispose());

            const capacities: MeasuredCapacities = {
                window: config.window,
                prefill: prefill?.sequenceCapacity ?? decode.sequenceCapacity,
                decode: decode.sequenceCapacity,
                pool: split ? config.numPages * config.pageTokens : Number.MAX_SAFE_INTEGER
            };
            const limit = requestLimit(capacities);
            const clamped = limit.boundBy !== "window";
            if (clamped && config.onWindowAboveCapacity === "refuse")
                throw new CapacityConfigError(`The window is set to ${config.window.toLocaleString("en-US")} tokens, but the measured ${limit.boundBy} capacity is ` +
                    `${limit.limit.toLocaleString("en-US")}. Lower the window to ${limit.limit.toLocaleString("en-US")} or give the ${limit.boundBy} ${limit.boundBy === "pool" ? "more pages" : "a larger context"}.`);
            const window: WindowReport = { ...limit, configured: config.window, clamped, capacities };

            return new KvEngine(config, runtime, options.runtime === undefined, model, fingerprint, layout,
                layoutFingerprint(layout, fingerprint), pool, stateDirectory, decode, prefill, window, mode, options.hooks ?? {});
        } catch (error) {
            for (const step of cleanup)
                await step();
            throw error;
        }
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

    /**
     * Runs one request to its end. Resolves only for a request served in full ("stop" or "length");
     * every other end (rejected, cancelled, failed) rejects with a typed error.
     */
    async generate(input: GenerateRequest): Promise<GenerateResult> {
        if (this.#disposed)
            throw new EngineStoppedError("The engine has stopped; start it again to run requests.");
        const id = toRequestId(`req-${this.#nextRequest++}`);
        const record = new RequestRecord(id, input.session, this.pool, (done, status) => this.#onTerminal(done, status));
        this.#requests.set(id, record);

        const admission = admit(input.promptTokens.length, input.maxTokens, this.window);
        if (!admission.ok)
            return this.#end(record, { kind: "rejected", error: admission.error });
        if (input.signal?.aborted)
            return this.#end(record, { kind: "cancelled" });

        const prefillTokens = this.prefill ? input.promptTokens.slice(0, -1) : [];
        const numPages = numPagesFor(prefillTokens.length, this.config.pageTokens);
        if (this.decode.numFreeSequences === 0 || (numPages > 0 && (this.prefill!.numFreeSequences === 0 || !this.pool.canReserve(numPages))))
            return this.#end(record, {
                kind: "rejected",
                error: new EngineBusyError(`All ${this.decode.numSequences} decode sequences or the pool's free pages (${this.pool.numFreePages} of ${this.config.numPages}, ` +
                    `${numPages} needed) are in use. Retry when a running request ends.`)
            });

        const slot = this.decode.acquireSequence()!;
        const timings: RequestTimings = { prefillMs: 0, handoffMs: 0, timeToFirstTokenMs: 0, decodeMs: 0 };
        const admittedAt = performance.now();
        const onAbort = (): void => void this.#end(record, { kind: "cancelled" }).catch(() => undefined);
        input.signal?.addEventListener("abort", onAbort, { once: true });
        try {
            if (numPages > 0) {
                record.holdPages(this.pool.reserve({ session: input.session, request: id, numPages, firstToken: 0 }));
                await this.#prefillAndHandOff(record, prefillTokens, slot, timings);
            }
            const decodeInput = this.prefill ? input.promptTokens.slice(-1) : input.promptTokens;
            return await this.#decode(record, slot, decodeInput, input, prefillTokens.length, timings, admittedAt);
        } catch (error) {
            if (record.isTerminal)
                return this.#end(record, record.status as TerminalStatus);
            return this.#end(record, { kind: "failed", error: error instanceof Error ? error : new Error(String(error)) });
        } finally {
            input.signal?.removeEventListener("abort", onAbort);
            await this.decode.releaseSequence(slot);
        }
    }

    async #prefillAndHandOff(record: RequestRecord, prefillTokens: readonly number[], decodeSlot: SequenceSlot, timings: RequestTimings): Promise<void> {
        const prefill = this.prefill!;
        const reservation = record.reservation!;
        this.#advance(record, { kind: "prefilling" });
        const prefillSlot = prefill.acquireSequence()!;
        const prefillStartedAt = performance.now();
        let exported;
        try {
            await prefill.evaluate(prefillSlot, prefillTokens);
            timings.prefillMs = performance.now() - prefillStartedAt;
            this.#advance(record, { kind: "transferring" });
            exported = await prefill.exportState(prefillSlot, record.id);
        } finally {
            await prefill.releaseSequence(prefillSlot);
        }
        this.#throwIfEnded(record);

        // Transfer: every page written under a write lease of this request's generation. A cancel
        // while the writer is slow releases the pages; the late write is then refused by the pool.
        const writeLeases: PageWriteLease[] = [];
        try {
            for (const handle of reservation.pages) {
                const leased = this.pool.acquireWriteLease(handle.pageId, handle.generation);
                if (!leased.ok)
                    throw leased.error;
                writeLeases.push(leased.lease);
            }
            await this.hooks.beforeTransferWrite?.(record.id);
            scatterStateToPages(exported, leaseWriter(writeLeases), this.config.pageTokens);
        } finally {
            for (const lease of writeLeases)
                lease.release();
        }
        this.#throwIfEnded(record);
        const checksums = reservation.pages.map((handle, index) => {
            const numTokens = Math.min(this.config.pageTokens, prefillTokens.length - index * this.config.pageTokens);
            const sealed = this.pool.seal(handle.pageId, handle.generation, numTokens);
            if (!sealed.ok)
                throw sealed.error;
            return sealed.checksum;
        });
        const sealedManifest: PageManifest = {
            request: record.id,
            session: record.session,
            generation: reservation.generation,
            pages: reservation.pages.map((handle) => handle.pageId),
            tokens: Array.from(exported.tokens),
            layoutFingerprint: this.layoutFingerprint,
            checksums
        };
        const manifest = this.hooks.afterSeal?.(sealedManifest, this.pool) ?? sealedManifest;

        // Decode's side: verify everything before a byte is assembled or loaded.
        const integrityError = verifyManifest(manifest, {
            request: record.id,
            session: record.session,
            generation: reservation.generation,
            layoutFingerprint: this.layoutFingerprint,
            numTokens: prefillTokens.length
        }, this.pool);
        if (integrityError !== undefined)
            throw integrityError;
        invariant(manifest.tokens.every((token, index) => token === prefillTokens[index]),
            () => `the verified manifest of request ${record.id} lists other tokens than its prompt`);

        const readLeases: PageReadLease[] = [];
        let state: Buffer;
        try {
            for (const page of manifest.pages) {
                const leased = this.pool.acquireReadLease(page, manifest.generation);
                if (!leased.ok)
                    throw leased.error;
                readLeases.push(leased.lease);
            }
            state = assembleSequenceState({
                tokens: manifest.tokens,
                layout: this.layout,
                targetLayout: this.decode.layout!,
                targetNumStreams: this.decode.numStreams!,
                pages: leaseReader(readLeases),
                pageTokens: this.config.pageTokens
            });
        } finally {
            for (const lease of readLeases)
                lease.release();
        }
        this.#throwIfEnded(record);
        await this.decode.importState(decodeSlot, state, record.id);
        invariant(decodeSlot.numTokens === prefillTokens.length,
            () => `decode sequence ${decodeSlot.index} holds ${decodeSlot.numTokens} tokens after loading ${prefillTokens.length}`);
        record.releasePages();
        timings.handoffMs = performance.now() - prefillStartedAt - timings.prefillMs;
    }

    async #decode(
        record: RequestRecord, slot: SequenceSlot, tokens: readonly number[], input: GenerateRequest,
        numHandedOffTokens: number, timings: RequestTimings, admittedAt: number
    ): Promise<GenerateResult> {
        this.#advance(record, { kind: "decoding" });
        const generated: number[] = [];
        let finishReason: "stop" | "length" = "stop";
        let firstTokenAt = performance.now();
        for await (const token of slot.generate(tokens, input.sampling ?? GREEDY)) {
            this.#throwIfEnded(record);
            if (generated.length === 0) {
                firstTokenAt = performance.now();
                timings.timeToFirstTokenMs = firstTokenAt - admittedAt;
            }
            generated.push(token);
            input.onToken?.(token);
            if (generated.length >= input.maxTokens) {
                finishReason = "length";
                break;
            }
        }
        this.#throwIfEnded(record);
        timings.decodeMs = performance.now() - firstTokenAt;
        record.finish({ kind: "finished", reason: finishReason });
        return { request: record.id, tokens: generated, finishReason, numHandedOffTokens, timings };
    }

    #advance(record: RequestRecord, status: Extract<RequestStatus, { kind: "prefilling" | "transferring" | "decoding" }>): void {
        if (!record.advance(status))
            this.#throwIfEnded(record);
        this.hooks.onStatus?.(record.id, status);
    }

    #throwIfEnded(record: RequestRecord): void {
        if (record.isTerminal)
            throw new RequestCancelledError(record.endedDuring);
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
        if (status.kind === "finished") this.counters.finished++;
        else if (status.kind === "rejected") this.counters.rejected++;
        else if (status.kind === "cancelled") this.counters.cancelled++;
        else {
            this.counters.failed++;
            if (status.error instanceof HandoffIntegrityError || (status.error instanceof KvaultError && /checksum|stale|mismatch/.test(status.error.code)))
                this.counters.integrityFailures++;
        }
        this.hooks.onStatus?.(record.id, status);
    }

    async dispose(): Promise<void> {
        if (this.#disposed)
            return;
        this.#disposed = true;
        await this.prefill?.dispose();
        await this.decode.dispose();
        this.pool.dispose();
        this.stateDirectory.dispose();
        await this.model.dispose();
        if (this.ownsRuntime)
            await this.runtime.dispose();
    }
}

function leaseWriter(leases: readonly PageWriteLease[]): PageBlockAccess {
    return {
        numPages: leases.length,
        write(pageIndex, pageOffset, bytes) {
            const written = leases[pageIndex]!.write(pageOffset, bytes);
            if (!written.ok)
                throw written.error;
        },
        read() {
            throw new Error("a write lease does not read");
        }
    };
}

function leaseReader(leases: readonly PageReadLease[]): PageBlockAccess {
    return {
        numPages: leases.length,
        write() {
            throw new Error("a read lease does not write");
        },
        read: (pageIndex, pageOffset, numBytes) => leases[pageIndex]!.read(pageOffset, numBytes)
    };
}
