import { xxh64 } from "@node-rs/xxhash";

/**
 * Checksum of a page's valid bytes (native xxh64, several GB/s). The seed is the page's first token
 * position, so the same bytes at another position hash differently: a page that lands at the wrong
 * place in a sequence fails verification, not only a page whose bytes changed.
 */
export function pageChecksum(validBytes: Uint8Array, tokenStart: number): bigint {
    return xxh64(validBytes, BigInt(tokenStart));
}

/** Fixed-width hex, for manifests, logs and the UI (a bigint does not survive JSON). */
export function formatChecksum(checksum: bigint): string {
    return checksum.toString(16).padStart(16, "0");
}
