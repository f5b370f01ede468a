import fs from "node:fs";
import path from "node:path";
import type { MemoryEvent } from "../../contract/memoryEvents.js";

/** The audit record's bound: at most this many files of at most MEMORY_RECORD_FILE_BYTES each; the oldest file goes first. */
export const MEMORY_RECORD_FILES = 4;
export const MEMORY_RECORD_FILE_BYTES = 8 * 1024 * 1024;
/** The record's folder in a data directory. */
export const MEMORY_RECORD_FOLDER = "memory-record";

const FILE_NAME = /^events-(\d{1,15})\.jsonl$/;

export interface MemoryRecordBounds {
    readonly maxFiles: number;
    readonly maxFileBytes: number;
}

/**
 * The memory timeline on disk: JSON Lines of MemoryEvents in `<dataDir>/memory-record/events-N.jsonl`,
 * N increasing, each file mode 0600. A file that would pass `maxFileBytes` starts the next, and
 * past `maxFiles` the oldest is deleted, so the record never holds more than maxFiles × maxFileBytes.
 * What it holds is what the engine's events hold: ids, sizes, states, checksums and outcomes.
 */
export class MemoryRecordFiles {
    readonly directory: string;
    readonly #bounds: MemoryRecordBounds;
    #current: number;
    #currentBytes: number;

    constructor(
        dataDirectory: string,
        bounds: MemoryRecordBounds = { maxFiles: MEMORY_RECORD_FILES, maxFileBytes: MEMORY_RECORD_FILE_BYTES }
    ) {
        if (!(bounds.maxFiles >= 1 && bounds.maxFileBytes >= 1024)) {
            throw new RangeError(
                `A memory record needs at least 1 file of at least 1 KiB; got ${bounds.maxFiles} of ${bounds.maxFileBytes} bytes.`
            );
        }
        this.#bounds = bounds;
        this.directory = path.join(dataDirectory, MEMORY_RECORD_FOLDER);
        fs.mkdirSync(this.directory, { recursive: true, mode: 0o700 });
        // after a restart the record goes on in its newest file
        this.#current = this.fileNumbers().at(-1) ?? 1;
        this.#currentBytes = sizeOf(this.#pathOf(this.#current));
    }

    /** The record's files' numbers, oldest first. */
    fileNumbers(): number[] {
        return fs
            .readdirSync(this.directory)
            .flatMap((name) => {
                const match = FILE_NAME.exec(name);
                return match ? [Number(match[1])] : [];
            })
            .sort((a, b) => a - b);
    }

    /** The files, oldest first, with their sizes in bytes. */
    files(): { readonly path: string; readonly numBytes: number }[] {
        return this.fileNumbers().map((number) => ({ path: this.#pathOf(number), numBytes: sizeOf(this.#pathOf(number)) }));
    }

    append(events: readonly MemoryEvent[]): void {
        for (const event of events) {
            const line = `${JSON.stringify(event)}\n`;
            const numBytes = Buffer.byteLength(line);
            if (this.#currentBytes > 0 && this.#currentBytes + numBytes > this.#bounds.maxFileBytes) {
                this.#rotate();
            }
            fs.appendFileSync(this.#pathOf(this.#current), line, { mode: 0o600 });
            this.#currentBytes += numBytes;
        }
    }

    /** Every line kept, oldest first. */
    readLines(): string[] {
        return this.fileNumbers().flatMap((number) =>
            fs
                .readFileSync(this.#pathOf(number), "utf8")
                .split("\n")
                .filter((line) => line.length > 0)
        );
    }

    #rotate(): void {
        this.#current++;
        this.#currentBytes = 0;
        const numbers = this.fileNumbers();
        // the file about to start counts against the bound too
        for (const old of numbers.slice(0, Math.max(0, numbers.length + 1 - this.#bounds.maxFiles))) {
            fs.rmSync(this.#pathOf(old), { force: true });
        }
    }

    #pathOf(number: number): string {
        return path.join(this.directory, `events-${number}.jsonl`);
    }
}

function sizeOf(file: string): number {
    try {
        return fs.statSync(file).size;
    } catch {
        return 0;
    }
}
