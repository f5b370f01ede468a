import path from "node:path";
import type { MemoryEventsPage, MemoryRecordHeader } from "../../contract/memoryEvents.js";
import { MemoryRecordFiles, type MemoryRecordBounds } from "./MemoryRecordFiles.js";

/** How often the host asks the engine for new memory events (ms): the record trails the engine by about this. */
export const MEMORY_RECORD_POLL_MS = 500;
/** How long closing waits for the engine's last events: an engine that does not answer must not hold up a quit. */
export const MEMORY_RECORD_LAST_POLL_MS = 2_000;
/** The most `memoryEvents` calls one poll makes: a poll that does not catch up goes on at the next. */
const MAX_CALLS_PER_POLL = 20;

/** What the record needs of the engine: its `memoryEvents` call and the model it loaded. */
export interface MemoryRecordEngine {
    memoryEvents(afterSeq: number): Promise<MemoryEventsPage>;
    readonly model: { readonly name: string | undefined; readonly file: string };
}

export interface MemoryRecordOptions {
    readonly dataDirectory: string;
    readonly kvaultVersion: string;
    /** The engine once it runs; a rejection (it could not start) leaves the record as it was. */
    readonly engine: () => Promise<MemoryRecordEngine>;
    readonly log: (line: string) => void;
    readonly pollMs?: number;
    readonly bounds?: MemoryRecordBounds;
}

/**
 * The audit record (issue 39): the engine's memory timeline, polled over its RPC and appended to
 * the data directory's rotated JSON Lines (MemoryRecordFiles), so it outlives the engine's ring
 * and the host's restarts; exported with a header naming Kvault's version and the model.
 */
export class MemoryRecord {
    readonly files: MemoryRecordFiles;
    readonly #options: MemoryRecordOptions;
    #afterSeq = 0;
    #timer: NodeJS.Timeout | undefined;
    #polling: Promise<void> | undefined;
    #disposed = false;

    constructor(options: MemoryRecordOptions) {
        this.#options = options;
        this.files = new MemoryRecordFiles(options.dataDirectory, options.bounds);
    }

    /** Polls every `pollMs` until disposed; the timer keeps no process alive. */
    start(): this {
        this.#timer = setInterval(() => void this.poll(), this.#options.pollMs ?? MEMORY_RECORD_POLL_MS);
        this.#timer.unref();
        return this;
    }

    /** Appends what the engine recorded since the last poll. One at a time: a call while one runs gets that one. */
    poll(): Promise<void> {
        this.#polling ??= this.#pollOnce().finally(() => {
            this.#polling = undefined;
        });
        return this.#polling;
    }

    async #pollOnce(): Promise<void> {
        if (this.#disposed) {
            return;
        }
        try {
            const engine = await this.#options.engine();
            for (let call = 0; call < MAX_CALLS_PER_POLL && !this.#disposed; call++) {
                const page = await engine.memoryEvents(this.#afterSeq);
                if (page.lastSeq < this.#afterSeq) {
                    this.#afterSeq = 0; // a restarted engine counts from 1 again
                    continue;
                }
                if (this.#disposed) {
                    return;
                }
                this.files.append(page.events);
                this.#afterSeq = page.events.at(-1)?.seq ?? this.#afterSeq;
                if (this.#afterSeq >= page.lastSeq) {
                    return;
                }
            }
        } catch (error) {
            this.#options.log(`The memory record could not read the engine's events: ${(error as Error).message}`);
        }
    }

    /** The engine's last events, before it stops: one poll, waited for at most `withinMs`. */
    async lastPoll(withinMs: number = MEMORY_RECORD_LAST_POLL_MS): Promise<void> {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([this.poll(), new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)))]);
        clearTimeout(timer);
    }

    /** The whole record as JSON Lines: a MemoryRecordHeader, then every event kept, oldest first, after a last poll. */
    async exportJsonl(): Promise<string> {
        await this.poll();
        const lines = this.files.readLines();
        const model = await this.#options.engine().then(
            (engine) => engine.model,
            () => ({ name: undefined, file: "" })
        );
        const header: MemoryRecordHeader = {
            kind: "kvaultMemoryRecord",
            kvaultVersion: this.#options.kvaultVersion,
            model: { name: model.name, file: path.basename(model.file) },
            exportedAt: new Date().toISOString(),
            numEvents: lines.length
        };
        return [JSON.stringify(header), ...lines].join("\n") + "\n";
    }

    /** Stops polling (a poll in flight appends nothing more); the files stay. Idempotent. */
    dispose(): void {
        this.#disposed = true;
        clearInterval(this.#timer);
    }
}
