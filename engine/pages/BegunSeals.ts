import type { PageId } from "../core/ids.js";

/** What a begun seal hashed: the page's bytes `[0, numBytes)` at `generation`, seeded with `tokenStart`. */
interface BegunSeal {
    readonly generation: number;
    readonly numBytes: number;
    readonly tokenStart: number;
    /** The checksum, or undefined where the hashing thread failed (the seal then hashes the page itself). */
    readonly checksum: Promise<bigint | undefined>;
}

/**
 * Pages whose checksums are being computed off the engine's thread since their writer finished
 * them (`PagePool.beginSeal`), for the seal to take. A begun seal is taken only for the page,
 * generation, length and first token it hashed; a new write lease or a scrub forgets it.
 */
export class BegunSeals {
    readonly #byPage = new Map<PageId, BegunSeal>();

    /** Records a page's checksum in flight; returns it as `take` will, settling without rejection. */
    begin(page: PageId, generation: number, numBytes: number, tokenStart: number, checksum: Promise<bigint>): Promise<bigint | undefined> {
        // caught here: a seal the writer never completes (a cancelled transfer) must not leave a rejection unhandled
        const settled = checksum.then(
            (value) => value,
            () => undefined
        );
        this.#byPage.set(page, { generation, numBytes, tokenStart, checksum: settled });
        return settled;
    }

    /** The checksum begun for exactly this page state, or undefined (then the caller hashes); forgotten either way. */
    take(page: PageId, generation: number, numBytes: number, tokenStart: number): Promise<bigint | undefined> | undefined {
        const begun = this.#byPage.get(page);
        this.#byPage.delete(page);
        const matches =
            begun !== undefined && begun.generation === generation && begun.numBytes === numBytes && begun.tokenStart === tokenStart;
        return matches ? begun.checksum : undefined;
    }

    forget(page: PageId): void {
        this.#byPage.delete(page);
    }

    clear(): void {
        this.#byPage.clear();
    }
}
