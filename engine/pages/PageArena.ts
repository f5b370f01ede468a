import { invariant } from "../core/invariant.js";
import { ArenaAllocationError } from "./pageErrors.js";
import { pageChecksum } from "./pageChecksum.js";
import type { HashJob, ZeroJob } from "./PageHasher.js";

// Compared against with Buffer.compare (a native memcmp), several times faster than a BigUint64Array
// scan, which allocates a bigint per word; and copied over a page to scrub it, since V8 fills shared
// memory an element at a time, several times slower than copying zeros (docs/measurements.md).
const ZERO_BLOCK = Buffer.alloc(1024 * 1024);

/** Buffer's copy for any Uint8Array source (it reads only the bytes the view spans); returns the bytes copied, fewer where `target` ends first. */
const copyBytes = (source: Uint8Array, target: Buffer, targetStart: number): number =>
    Buffer.prototype.copy.call(source, target, targetStart);

/**
 * The bytes of the pool: `numPages` pages of `pageBytes` each, page `p` at `[p·pageBytes, (p+1)·pageBytes)`.
 * Knows nothing of owners or states; `PagePool` decides who may call what. Offsets are bytes from
 * the start of a page.
 */
export class PageArena {
    #bytes: Buffer;
    /** The memory `#bytes` views, shared so that page hashing threads read it in place (PageHasher). */
    #shared: SharedArrayBuffer;

    /** Throws `ArenaAllocationError` when the host cannot provide the memory. */
    constructor(
        readonly numPages: number,
        readonly pageBytes: number
    ) {
        const numBytes = numPages * pageBytes;
        try {
            // Its own memory (never Node's shared slab): starts at offset 0, and is zero.
            this.#shared = new SharedArrayBuffer(numBytes);
            this.#bytes = Buffer.from(this.#shared);
        } catch (cause) {
            throw new ArenaAllocationError(numBytes, cause);
        }
    }

    /** The arena's memory itself, for threads that only read it (PageHasher); empty once disposed. */
    get shared(): SharedArrayBuffer {
        return this.#shared;
    }

    /**
     * Copies `bytes` into the page with Buffer's native copy (a memmove), not `TypedArray.set`,
     * which copies into shared memory an element at a time with relaxed atomics and made a
     * handoff's scatter the slowest of its copies (docs/measurements.md).
     */
    write(page: number, byteOffset: number, bytes: Uint8Array): void {
        const numCopied = copyBytes(bytes, this.#bytes, page * this.pageBytes + byteOffset);
        invariant(
            numCopied === bytes.length,
            () => `a write of ${bytes.length} bytes at offset ${byteOffset} of page ${page} copied ${numCopied}`
        );
    }

    /** A copy of `[byteOffset, end)`: a view would show the next owner's bytes once the page is reused. */
    readCopy(page: number, byteOffset: number, end: number): Uint8Array {
        const start = page * this.pageBytes;
        return new Uint8Array(this.#bytes.subarray(start + byteOffset, start + end));
    }

    /**
     * The bytes `[byteOffset, end)` themselves, no copy: for a reader holding a lease on the page,
     * which keeps it from being scrubbed and reused, and which must not keep the view past it.
     */
    view(page: number, byteOffset: number, end: number): Uint8Array {
        const start = page * this.pageBytes;
        return this.#bytes.subarray(start + byteOffset, start + end);
    }

    /** xxh64 of the page's first `numValidBytes` bytes, seeded with its first token position. */
    checksum(page: number, numValidBytes: number, tokenStart: number): bigint {
        const start = page * this.pageBytes;
        return pageChecksum(this.#bytes.subarray(start, start + numValidBytes), tokenStart);
    }

    /** The same checksum as a job for `PageHasher`, which computes it over `shared` off this thread. */
    hashJob(page: number, numValidBytes: number, tokenStart: number): HashJob {
        return { byteOffset: page * this.pageBytes, numBytes: numValidBytes, tokenStart };
    }

    /** The same scrub as a job for `PageHasher.zero`, which does it over `shared` off this thread. */
    zeroJob(page: number): ZeroJob {
        return { byteOffset: page * this.pageBytes, numBytes: this.pageBytes };
    }

    /** Zeroes the whole page, not only the bytes its owner wrote: the free-list contract (I6) is "all zero". */
    scrub(page: number): void {
        const start = page * this.pageBytes;
        for (let offset = 0; offset < this.pageBytes; offset += ZERO_BLOCK.length) {
            ZERO_BLOCK.copy(this.#bytes, start + offset, 0, Math.min(ZERO_BLOCK.length, this.pageBytes - offset));
        }
    }

    isZero(page: number): boolean {
        const end = (page + 1) * this.pageBytes;
        for (let offset = page * this.pageBytes; offset < end; offset += ZERO_BLOCK.length) {
            const numBytes = Math.min(end - offset, ZERO_BLOCK.length);
            if (this.#bytes.compare(ZERO_BLOCK, 0, numBytes, offset, offset + numBytes) !== 0) {
                return false;
            }
        }
        return true;
    }

    flipByte(page: number, byteOffset: number): void {
        const index = page * this.pageBytes + byteOffset;
        invariant(index < this.#bytes.length, () => `flip of byte ${index} in an arena of ${this.#bytes.length} bytes`);
        this.#bytes[index] = (this.#bytes[index] as number) ^ 0xff;
    }

    /** Lets the memory go; the pool refuses every call before it reaches a disposed arena. */
    dispose(): void {
        this.#bytes = Buffer.alloc(0);
        this.#shared = new SharedArrayBuffer(0);
    }
}
