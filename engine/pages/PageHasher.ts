import { createRequire } from "node:module";
import os from "node:os";
import { Worker } from "node:worker_threads";
import { invariant } from "../core/invariant.js";
import { pageChecksum } from "./pageChecksum.js";

/** One page's checksum to compute: the arena's bytes `[byteOffset, byteOffset + numBytes)`, seeded with `tokenStart`. */
export interface HashJob {
    readonly byteOffset: number;
    readonly numBytes: number;
    readonly tokenStart: number;
}

/**
 * Below this many bytes a batch is hashed on the engine's thread: a worker's round trip (a message
 * each way and a wake) costs about what hashing this much does.
 */
export const OFF_THREAD_MIN_BYTES = 1024 * 1024;

/** Most hashing threads: a handoff's pages are hashed in parallel, one contiguous share each. */
export const MAX_HASH_WORKERS = 4;

/** Bytes of the arena to zero: a released page, `[byteOffset, byteOffset + numBytes)`. */
export interface ZeroJob {
    readonly byteOffset: number;
    readonly numBytes: number;
}

/**
 * The worker's whole program, evaluated as CommonJS: `pageChecksum` (xxh64 seeded with the page's
 * first token position) over views of the shared arena, and zeroing released pages with a copy of
 * zeros (Buffer's native copy: V8 fills shared memory an element at a time). Evaluated, not a
 * file, so the engine's bundle needs no second entry point; the hash module is passed as the path
 * the engine resolved.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { xxh64 } = require(workerData.xxhashPath);
const bytes = Buffer.from(workerData.arena);
const zeros = Buffer.alloc(1024 * 1024);
parentPort.on("message", ({ id, jobs, zero }) => {
    for (const [byteOffset, numBytes] of zero ?? []) {
        for (let offset = 0; offset < numBytes; offset += zeros.length) {
            zeros.copy(bytes, byteOffset + offset, 0, Math.min(zeros.length, numBytes - offset));
        }
    }
    const checksums = jobs.map(([byteOffset, numBytes, tokenStart]) =>
        xxh64(bytes.subarray(byteOffset, byteOffset + numBytes), BigInt(tokenStart)));
    parentPort.postMessage({ id, checksums });
});`;

interface PendingBatch {
    readonly resolve: (checksums: bigint[]) => void;
    readonly reject: (error: Error) => void;
}

interface HashThread {
    readonly worker: Worker;
    readonly pending: Map<number, PendingBatch>;
}

/**
 * Computes page checksums off the engine's thread, in parallel: the arena's memory is shared with
 * a few worker threads, each hashing a contiguous share of a batch's pages, so a long prompt's
 * seal and verify neither hold the event loop nor run one page after another on one core. The
 * checksum is the same function `PageArena.checksum` computes inline. Where threads cannot be
 * started (or one fails), batches are hashed inline from then on, with the same result. The same
 * threads zero released pages (`zero`), so a handoff's release does not hold the loop either.
 */
export class PageHasher {
    #threads: HashThread[] | undefined;
    #nextBatchId = 0;
    /** The thread the next batch's first share goes to: one-page batches take the threads by turns. */
    #nextThread = 0;
    #broken = false;
    #disposed = false;

    constructor(
        private readonly arena: SharedArrayBuffer,
        private readonly numThreads: number = Math.min(MAX_HASH_WORKERS, os.availableParallelism())
    ) {
        invariant(Number.isSafeInteger(numThreads) && numThreads >= 1, () => `a page hasher of ${numThreads} threads`);
    }

    /** Whether a batch of `numBytes` goes to the threads: big enough to be worth a round trip, and threads to take it. */
    isWorthThreads(numBytes: number): boolean {
        return !this.#broken && !this.#disposed && numBytes >= OFF_THREAD_MIN_BYTES;
    }

    /** Threads running now: none before the first batch or `start()`, and none once disposed or broken. */
    get numThreadsRunning(): number {
        return this.#threads?.length ?? 0;
    }

    /**
     * Starts the threads now rather than at the first batch, which would wait for them to boot;
     * settles once every thread has answered, or failed (batches are then hashed inline), never
     * rejecting. Idempotent.
     */
    async start(): Promise<void> {
        const threads = this.#broken ? undefined : this.#startThreads();
        if (threads === undefined) {
            return;
        }
        await Promise.all(threads.map((thread) => this.#send(thread, []))).catch(() => undefined);
    }

    /** Every job's checksum, in job order. Rejects when the hasher is disposed meanwhile. */
    async hash(jobs: readonly HashJob[]): Promise<bigint[]> {
        const threads = this.#broken ? undefined : this.#startThreads();
        if (threads === undefined) {
            return jobs.map((job) => this.#hashInline(job));
        }
        const shares = splitJobs(jobs, threads.length);
        const first = this.#nextThread;
        this.#nextThread = (first + shares.length) % threads.length;
        try {
            const results = await Promise.all(shares.map((share, index) => this.#send(threads[(first + index) % threads.length]!, share)));
            return results.flat();
        } catch (error) {
            if (this.#disposed) {
                throw error;
            }
            return jobs.map((job) => this.#hashInline(job)); // a failed thread is never used again (#fail)
        }
    }

    /**
     * Zeroes the arena's bytes of every job on the threads, a share each, resolving once all are
     * zero. Rejects where there are no threads to do it (none started, disposed, or one failed):
     * the caller zeroes the bytes itself then. Only for bytes nothing else touches meanwhile.
     */
    async zero(jobs: readonly ZeroJob[]): Promise<void> {
        const threads = this.#broken || this.#disposed ? undefined : this.#threads;
        if (threads === undefined) {
            throw new Error("no page thread is running to zero pages");
        }
        const shares = splitJobs(
            jobs.map((job) => ({ ...job, tokenStart: 0 })),
            threads.length
        );
        const first = this.#nextThread;
        this.#nextThread = (first + shares.length) % threads.length;
        await Promise.all(shares.map((share, index) => this.#send(threads[(first + index) % threads.length]!, [], share)));
    }

    /** Ends the threads; a batch in flight rejects. Idempotent. */
    dispose(): void {
        this.#disposed = true;
        this.#fail(new Error("the page hasher was disposed"));
    }

    #hashInline(job: HashJob): bigint {
        return pageChecksum(new Uint8Array(this.arena, job.byteOffset, job.numBytes), job.tokenStart);
    }

    #send(thread: HashThread, jobs: readonly HashJob[], zero: readonly ZeroJob[] = []): Promise<bigint[]> {
        const id = this.#nextBatchId++;
        return new Promise<bigint[]>((resolve, reject) => {
            if (thread.pending.size === 0) {
                thread.worker.ref(); // a batch in flight keeps the process alive until it comes back
            }
            thread.pending.set(id, { resolve, reject });
            thread.worker.postMessage({
                id,
                jobs: jobs.map((job) => [job.byteOffset, job.numBytes, job.tokenStart]),
                zero: zero.map((job) => [job.byteOffset, job.numBytes])
            });
        });
    }

    #startThreads(): HashThread[] | undefined {
        if (this.#threads !== undefined || this.#disposed) {
            return this.#threads;
        }
        try {
            const xxhashPath = createRequire(import.meta.url).resolve("@node-rs/xxhash");
            this.#threads = Array.from({ length: this.numThreads }, () => this.#startThread(xxhashPath));
        } catch {
            this.#fail(new Error("the page hashing threads could not start"));
        }
        return this.#threads;
    }

    #startThread(xxhashPath: string): HashThread {
        const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { arena: this.arena, xxhashPath } });
        const thread: HashThread = { worker, pending: new Map() };
        worker.unref(); // an idle hasher never keeps the process alive
        worker.on("message", ({ id, checksums }: { id: number; checksums: bigint[] }) => {
            thread.pending.get(id)?.resolve(checksums);
            thread.pending.delete(id);
            if (thread.pending.size === 0) {
                worker.unref();
            }
        });
        worker.on("error", (error) => this.#fail(error));
        worker.on("exit", (code) => this.#fail(new Error(`a page hashing thread exited (code ${code})`)));
        return thread;
    }

    /**
     * A thread failed or exited: no thread is used again, and every batch in flight rejects once its
     * thread has stopped, never before: a zeroing batch's pages go free when it settles, and a
     * thread still writing zeros then would write them into the pages' next owner's bytes.
     */
    #fail(error: Error): void {
        if (!this.#disposed) {
            this.#broken = true;
        }
        const threads = this.#threads ?? [];
        this.#threads = undefined;
        for (const thread of threads) {
            const batches = [...thread.pending.values()];
            thread.pending.clear();
            const rejectAll = (): void => batches.forEach((batch) => batch.reject(error));
            thread.worker.terminate().then(rejectAll, rejectAll);
        }
    }
}

/** `jobs` cut into at most `numShares` contiguous runs of about equal bytes, none empty, in order. */
export function splitJobs(jobs: readonly HashJob[], numShares: number): HashJob[][] {
    invariant(Number.isSafeInteger(numShares) && numShares >= 1, () => `${jobs.length} hash jobs split ${numShares} ways`);
    const totalBytes = jobs.reduce((sum, job) => sum + job.numBytes, 0);
    const shares: HashJob[][] = [];
    let current: HashJob[] = [];
    let doneBytes = 0;
    for (const job of jobs) {
        current.push(job);
        doneBytes += job.numBytes;
        // close a share once it reaches its fair part of the bytes, keeping the last share open
        if (shares.length < numShares - 1 && doneBytes >= (totalBytes * (shares.length + 1)) / numShares) {
            shares.push(current);
            current = [];
        }
    }
    if (current.length > 0) {
        shares.push(current);
    }
    return shares;
}
