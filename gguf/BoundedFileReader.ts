import fs from "node:fs";
import { GgufHeaderProblem, formatCount } from "./GgufHeaderProblem.js";

/**
 * Reads a file front to back in bounded `fs.readSync`s, never the whole file: a window of
 * `chunkBytes` (or exactly what one value needs, when more) that moves forward. Every read is
 * checked against the bytes the file has and against `limitBytes` BEFORE a buffer is allocated,
 * so a length read from the file can never make it allocate more than the file holds.
 */
export class BoundedFileReader {
    #window: Buffer = Buffer.alloc(0);
    #windowStart = 0;
    #offset = 0;

    constructor(
        private readonly fd: number,
        /** The file's size, from fstat. */
        readonly fileBytes: number,
        /** Offset past which nothing is read: a header longer than this is refused. */
        private readonly limitBytes: number,
        private readonly chunkBytes: number
    ) {}

    get offset(): number {
        return this.#offset;
    }

    get bytesLeft(): number {
        return this.fileBytes - this.#offset;
    }

    /** Bytes that may still be read: what the file has, up to the limit. */
    get readableBytesLeft(): number {
        return Math.min(this.fileBytes, this.limitBytes) - this.#offset;
    }

    /**
     * The next `numBytes` bytes (a view valid until the next call), moving past them. `what` names
     * the value for the error: "metadata entry 3 of 24's key".
     */
    take(numBytes: number, what: () => string): Buffer {
        const at = this.#advance(numBytes, what);
        return this.#window.subarray(at, at + numBytes);
    }

    /**
     * A string: a u64 length, then that many bytes of UTF-8 (invalid sequences read as U+FFFD,
     * as node-llama-cpp and llama.cpp keep them). The length is checked before anything is read.
     */
    string(what: () => string): string {
        const at = this.#advance(8, () => `${what()}'s length`);
        // Two halves, not a bigint: this runs once per vocabulary token.
        const length = this.#window.readUInt32LE(at + 4) * 2 ** 32 + this.#window.readUInt32LE(at);
        if (length > this.bytesLeft) {
            const exact = this.#window.readBigUInt64LE(at);
            throw new GgufHeaderProblem(
                "unreadable",
                `${what()} claims ${formatCount(exact)} bytes; the file has ${formatCount(this.bytesLeft)} bytes left`
            );
        }
        const start = this.#advance(length, what);
        return this.#window.toString("utf8", start, start + length);
    }

    /** Throws unless `numBytes` (a count from the file, possibly huge) more bytes can be read. */
    ensure(numBytes: number | bigint, what: () => string): void {
        if (typeof numBytes === "number" ? numBytes <= this.readableBytesLeft : numBytes <= BigInt(this.readableBytesLeft)) {
            return;
        }
        if (BigInt(numBytes) > BigInt(this.bytesLeft)) {
            throw new GgufHeaderProblem(
                "unreadable",
                `${what()} needs ${formatCount(numBytes)} bytes; the file has ${formatCount(this.bytesLeft)} bytes left`
            );
        }
        throw new GgufHeaderProblem(
            "unsupported",
            `${what()} would take the header past ${formatCount(this.limitBytes)} bytes, the most Kvault reads of a GGUF header ` +
                "(a real model's metadata and tensor list take a few MB). Open another model file"
        );
    }

    // `#advance` first, then `#window`: advancing may replace the window.
    u8(what: () => string): number {
        const at = this.#advance(1, what);
        return this.#window.readUInt8(at);
    }

    u32(what: () => string): number {
        const at = this.#advance(4, what);
        return this.#window.readUInt32LE(at);
    }

    u64(what: () => string): bigint {
        const at = this.#advance(8, what);
        return this.#window.readBigUInt64LE(at);
    }

    /** Moves past `numBytes` bytes, reading them into the window first if need be; returns where they start in it. */
    #advance(numBytes: number, what: () => string): number {
        this.ensure(numBytes, what);
        if (this.#offset + numBytes > this.#windowStart + this.#window.length) {
            this.#fill(numBytes);
        }
        const at = this.#offset - this.#windowStart;
        this.#offset += numBytes;
        return at;
    }

    /** Reads a fresh window at the offset: at least `numBytes` (already checked to exist), at most what is left. */
    #fill(numBytes: number): void {
        const size = Math.max(numBytes, Math.min(this.chunkBytes, this.readableBytesLeft));
        const window = Buffer.allocUnsafe(size);
        let filled = 0;
        while (filled < size) {
            const numRead = fs.readSync(this.fd, window, filled, size - filled, this.#offset + filled);
            if (numRead === 0) {
                throw new GgufHeaderProblem(
                    "unreadable",
                    `the file ended at byte ${formatCount(this.#offset + filled)} while it was read, though it had ${formatCount(this.fileBytes)} bytes when opened (it is being written or cut)`
                );
            }
            filled += numRead;
        }
        this.#window = window;
        this.#windowStart = this.#offset;
    }
}
