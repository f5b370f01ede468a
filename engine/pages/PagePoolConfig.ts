import { constants as bufferConstants } from "node:buffer";
import { PagePoolConfigError } from "./pageErrors.js";

/**
 * Guard against a geometry mistake asking for more host memory than a desktop has (bytes).
 * Callers that size the pool from measured free memory may raise it with `maxArenaBytes`.
 */
export const DEFAULT_MAX_ARENA_BYTES = 8 * 1024 ** 3;

/** Bounds the per-page metadata (about 60 bytes a page) independently of the arena. */
export const MAX_NUM_PAGES = 4_194_304;

export interface PagePoolConfig {
    /** Pages in the arena. */
    readonly numPages: number;
    /** Consecutive token positions of one sequence a page holds, all layers, K and V. */
    readonly pageTokens: number;
    /** Bytes of one page, from the model geometry (layers, K/V row sizes, KV type); opaque to the pool. */
    readonly pageBytes: number;
    /** Largest arena this pool may allocate (bytes); `numPages × pageBytes` must not exceed it. */
    readonly maxArenaBytes: number;
}

export type PagePoolConfigInput = Omit<PagePoolConfig, "maxArenaBytes"> & { readonly maxArenaBytes?: number };

export type PagePoolConfigResult =
    | { readonly ok: true; readonly config: Readonly<PagePoolConfig> }
    | { readonly ok: false; readonly error: PagePoolConfigError };

const formatCount = (value: number): string => value.toLocaleString("en-US");

function positiveIntegerError(name: string, value: unknown): PagePoolConfigError | undefined {
    if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) {
        return undefined;
    }
    return new PagePoolConfigError(`Page pool ${name} must be a positive integer; got ${String(value)}.`);
}

/**
 * Validates once, at the edge, and returns a frozen config. The arena limit is the
 * smaller of `maxArenaBytes` and the largest buffer this runtime can allocate.
 */
export function validatePagePoolConfig(input: PagePoolConfigInput): PagePoolConfigResult {
    const maxArenaBytes = input.maxArenaBytes ?? DEFAULT_MAX_ARENA_BYTES;
    const fieldError =
        positiveIntegerError("numPages", input.numPages) ??
        positiveIntegerError("pageTokens", input.pageTokens) ??
        positiveIntegerError("pageBytes", input.pageBytes) ??
        positiveIntegerError("maxArenaBytes", maxArenaBytes);
    if (fieldError !== undefined) {
        return { ok: false, error: fieldError };
    }

    if (input.numPages > MAX_NUM_PAGES) {
        return {
            ok: false,
            error: new PagePoolConfigError(
                `Page pool of ${formatCount(input.numPages)} pages exceeds the limit of ${formatCount(MAX_NUM_PAGES)}. ` +
                    "Use larger pages (more tokens per page)."
            )
        };
    }

    const arenaBytes = input.numPages * input.pageBytes;
    const limitBytes = Math.min(maxArenaBytes, bufferConstants.MAX_LENGTH);
    if (arenaBytes > limitBytes) {
        return {
            ok: false,
            error: new PagePoolConfigError(
                `The page pool needs ${formatCount(arenaBytes)} bytes (${formatCount(input.numPages)} pages × ` +
                    `${formatCount(input.pageBytes)} bytes), over the limit of ${formatCount(limitBytes)} bytes. ` +
                    "Use fewer pages, a smaller context window or a smaller KV type."
            )
        };
    }

    return {
        ok: true,
        config: Object.freeze({
            numPages: input.numPages,
            pageTokens: input.pageTokens,
            pageBytes: input.pageBytes,
            maxArenaBytes
        })
    };
}
