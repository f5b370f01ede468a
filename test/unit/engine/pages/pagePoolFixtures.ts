import { expect } from "vitest";
import { requestId, workspaceId, type RequestId, type WorkspaceId } from "../../../../engine/core/ids.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import type { PagePoolConfigInput } from "../../../../engine/pages/PagePoolConfig.js";
import { assertAuditClean } from "../../../support/assertAuditClean.js";
import type { PageHandle } from "../../../../engine/pages/Reservation.js";

/** Small enough to read a whole pool in a failure message: 8 pages of 4 tokens, 64 bytes each. */
export const SMALL_POOL: PagePoolConfigInput = { numPages: 8, pageTokens: 4, pageBytes: 64 };

export function makePool(config: PagePoolConfigInput = SMALL_POOL): PagePool {
    const pool = new PagePool(config);
    assertAuditClean(pool.audit({ scanFreePages: true }));
    return pool;
}

export const alice: WorkspaceId = workspaceId("alice");
export const bob: WorkspaceId = workspaceId("bob");
export const req = (name: string): RequestId => requestId(name);

/** Bytes no scrubbed page holds: `length` copies of `fill` (non-zero). */
export function pattern(length: number, fill: number): Uint8Array {
    return new Uint8Array(length).fill(fill);
}

/** Writes `bytes` at offset 0 through a short-lived write lease, asserting it was accepted. */
export function writeThrough(pool: PagePool, handle: PageHandle, bytes: Uint8Array): void {
    const acquired = pool.acquireWriteLease(handle.pageId, handle.generation);
    if (!acquired.ok) {
        throw acquired.error;
    }
    const written = acquired.lease.write(0, bytes);
    acquired.lease.release();
    expect(written.ok).toBe(true);
}

export function writeAndSeal(pool: PagePool, handle: PageHandle, bytes: Uint8Array, numTokens?: number): bigint {
    writeThrough(pool, handle, bytes);
    const sealed = pool.seal(handle.pageId, handle.generation, numTokens);
    if (!sealed.ok) {
        throw sealed.error;
    }
    return sealed.checksum;
}

/** Reads a sealed page's valid bytes through a short-lived read lease. */
export function readThrough(pool: PagePool, handle: PageHandle): Uint8Array {
    const acquired = pool.acquireReadLease(handle.pageId, handle.generation);
    if (!acquired.ok) {
        throw acquired.error;
    }
    const bytes = acquired.lease.read();
    acquired.lease.release();
    return bytes;
}

/**
 * How every test ends: no lease held, no reservation live, every page free and
 * zero, I1–I6 hold. Then the pool is disposed.
 */
export function expectNoLeaks(pool: PagePool): void {
    expect(pool.numActiveLeases).toBe(0);
    expect(pool.numLiveReservations).toBe(0);
    expect(pool.numFreePages).toBe(pool.config.numPages);
    const audit = pool.audit({ scanFreePages: true });
    assertAuditClean(audit);
    expect(audit.numFreePagesScanned).toBe(pool.config.numPages);
    pool.dispose();
}

/** `expectNoLeaks` once the pages released last are zeroed: big pages are zeroed on the page threads, after the release returns. */
export async function expectNoLeaksOnceZeroed(pool: PagePool): Promise<void> {
    await pool.whenZeroed();
    expectNoLeaks(pool);
}
