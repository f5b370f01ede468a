import path from "node:path";
import type { MemoryEvent, MemoryEventsPage, MemoryRecordHeader, MemoryRecordModel } from "../../contract/memoryEvents.js";
import { MemoryRecordFiles, type MemoryRecordBounds } from "./MemoryRecordFiles.js";

/** How often the host asks the engine for new memory events (ms): the record trails the engine by about this. */
export const MEMORY_RECORD_POLL_MS = 500;
/** How long closing waits for the engine's last events: an engine that does not answer must not hold up a quit. */
export const MEMORY_RECORD_LAST_POLL_MS = 2_000;
/** The most `memoryEvents` calls one poll makes: a poll that does not catch up goes on at the next. */
const MAX_CALLS_PER_POLL = 20;

/** What the record needs of a loaded model's engine: its `memoryEvents` call and the model it loaded. */
export interface MemoryRecordEngine {
    /** listLocalModels' id, which each of a local model's events is recorded under; undefined where the host runs one model. */
    readonly id: string | undefined;
    /** The host's own model (listed first); the others are the pool's (host/supervisor/EnginePool.ts). */
    readonly primary: boolean;
    memoryEvents(afterSeq: number): Promise<MemoryEventsPage>;
    readonly model: { readonly name: string | undefined; readonly file: string };
}

export interface MemoryRecordOptions {
    readonly dataDirectory: string;
    readonly kvaultVersion: string;
    /**
     * Every loaded model's engine, the host's own first, once it runs; a rejection (it could not
     * start) leaves the record as it was. Read at every poll: a model loads on a turn and unloads when idle.
     */
    readonly engines: () => Promise<readonly MemoryRecordEngine[]>;
    readonly log: (line: string) => void;
    readonly pollMs?: number;
    readonly bounds?: MemoryRecordBounds;
}

/**
 * The audit record (issue 39): every loaded model's engine's memory timeline, polled over its RPC
 * and appended to the data directory's rotated JSON Lines (MemoryRecordFiles), so it outlives the
 * engines' rings and the host's restarts; each local model's event names its model in `model`
 * (one without it, as every event of an older record, is the host's own model's). Exported
 * with a header naming Kvault's version and the models.
 */
export class MemoryRecord {
    readonly files: MemoryRecordFiles;
    readonly #options: MemoryRecordOptions;
    /** By model id ("" where the host runs one): the last seq recorded of that model's engine. */
    readonly #afterSeq = new Map<string, number>();
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
        let engines: readonly MemoryRecordEngine[];
        try {
            engines = await this.#options.engines();
        } catch (error) {
            this.#options.log(`The memory record could not read the engine's events: ${(error as Error).message}`);
            return;
        }
        // A model that unloaded is forgotten: loaded again, its new engine counts from 1.
        const keys = new Set(engines.map(keyOf));
        for (const key of [...this.#afterSeq.keys()].filter((kept) => !keys.has(kept))) {
            this.#afterSeq.delete(key);
        }
        for (const engine of engines) {
            try {
                await this.#pollEngine(engine);
            } catch (error) {
                const whose = engine.primary ? "the engine's" : `the model "${engine.id}"'s engine's`;
                this.#options.log(`The memory record could not read ${whose} events: ${(error as Error).message}`);
            }
        }
    }

    async #pollEngine(engine: MemoryRecordEngine): Promise<void> {
        const key = keyOf(engine);
        for (let call = 0; call < MAX_CALLS_PER_POLL && !this.#disposed; call++) {
            const afterSeq = this.#afterSeq.get(key) ?? 0;
            const page = await engine.memoryEvents(afterSeq);
            if (page.lastSeq < afterSeq) {
                this.#afterSeq.set(key, 0); // a restarted engine counts from 1 again
                continue;
            }
            if (this.#disposed) {
                return;
            }
            // The host's own model's events stay as its engine wrote them, as in records written before models were named.
            this.files.append(
                engine.primary || engine.id === undefined ? page.events : page.events.map((event) => namedEvent(event, engine.id!))
            );
            this.#afterSeq.set(key, page.events.at(-1)?.seq ?? afterSeq);
            if ((this.#afterSeq.get(key) ?? 0) >= page.lastSeq) {
                return;
            }
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
        const engines = await this.#options.engines().catch((): readonly MemoryRecordEngine[] => []);
        const own = engines.find((engine) => engine.primary)?.model ?? { name: undefined, file: "" };
        const header: MemoryRecordHeader = {
            kind: "kvaultMemoryRecord",
            kvaultVersion: this.#options.kvaultVersion,
            model: { name: own.name, file: path.basename(own.file) },
            models: recordedModels(engines, lines),
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

function keyOf(engine: MemoryRecordEngine): string {
    return engine.id ?? "";
}

function namedEvent(event: MemoryEvent, model: string): MemoryEvent {
    return { ...event, model };
}

/**
 * The models whose events the export holds, and those loaded now: the loaded ones with their
 * files, the host's own first; one no longer loaded by its id alone. Events without `model` are
 * the host's own model's.
 */
function recordedModels(engines: readonly MemoryRecordEngine[], lines: readonly string[]): MemoryRecordModel[] {
    const models: MemoryRecordModel[] = engines.map((engine) => ({
        ...(engine.id === undefined ? {} : { id: engine.id }),
        name: engine.model.name,
        file: path.basename(engine.model.file),
        primary: engine.primary
    }));
    const listed = new Set(models.map((model) => model.id));
    for (const line of lines) {
        // A cheap look before parsing: most lines are the host's own model's, or a model already listed.
        if (!line.includes('"model":')) {
            continue;
        }
        const id = (JSON.parse(line) as { readonly model?: unknown }).model;
        if (typeof id === "string" && !listed.has(id)) {
            listed.add(id);
            models.push({ id, name: undefined, file: "", primary: false });
        }
    }
    return models;
}
