import { workspaceId, type PageHolder, type PageId } from "../core/ids.js";
import { KvaultError } from "../core/KvaultError.js";
import { blockOffsetsInPage, type KvLayout } from "../codec/KvLayout.js";
import type { ParsedSequenceState } from "../codec/parseSequenceState.js";
import type { KvEngine, KvEngineHooks } from "../KvEngine.js";
import type { PagePool } from "../pages/PagePool.js";

// What every drill scenario shares: the sandbox's workspaces, what a run reports, and the ways a
// scenario looks for another request's bytes in the victim's KV.

/** What one run of a scenario saw: the error the victim's request ended with, and the evidence of a leak, if any. */
export interface ScenarioOutcome {
    readonly error: { readonly code: string; readonly message: string } | null;
    /** Empty when no byte of another request reached the victim; else what was seen. */
    readonly leak: string;
}

export type Scenario = (
    engine: KvEngine,
    hooks: KvEngineHooks,
    prompt: (text: string, count: number) => number[]
) => Promise<ScenarioOutcome>;

export const A = workspaceId("drill-workspace-a");
export const B = workspaceId("drill-workspace-b");
export const VICTIM = workspaceId("drill-victim");

export function errorOf(error: unknown): { code: string; message: string } {
    return {
        code: error instanceof KvaultError ? error.code : "internal_error",
        message: error instanceof Error ? error.message : String(error)
    };
}

/** Runs the victim's request, returning its error (null when served). */
export async function victimRequest(engine: KvEngine, tokens: number[]): Promise<{ code: string; message: string } | null> {
    try {
        await engine.generate({ workspace: VICTIM, promptTokens: tokens, maxTokens: 4 });
        return null;
    } catch (error) {
        return errorOf(error);
    }
}

export function countDifferentBytes(a: Uint8Array, b: Uint8Array): number {
    let count = 0;
    for (let index = 0; index < Math.min(a.length, b.length); index++) {
        if (a[index] !== b[index]) {
            count++;
        }
    }
    return count;
}

/**
 * Workspace A's turn, handed off through pages; every page A sealed is copied as it was, then A's
 * KV is forgotten, so its pages go back to the free list and its decode sequence is free (the
 * victim then needs no swap, only pages). Returns A's page bytes by page.
 */
export async function fillPagesWithA(engine: KvEngine, hooks: KvEngineHooks, tokens: readonly number[]): Promise<Map<PageId, Uint8Array>> {
    const bytesOfA = new Map<PageId, Uint8Array>();
    hooks.afterSeal = (manifest, pool) => {
        if (manifest.workspace === A) {
            for (const page of manifest.pages) {
                bytesOfA.set(page, pool.inspectRawPage(page));
            }
        }
        return manifest;
    };
    try {
        await engine.generate({ workspace: A, promptTokens: tokens, maxTokens: 2 });
    } finally {
        delete hooks.afterSeal;
    }
    await engine.forgetWorkspace(A);
    return bytesOfA;
}

/** The pages a holder holds now, written or not, in token order. */
export function pagesReservedBy(pool: PagePool, holder: PageHolder): PageId[] {
    const pages: PageId[] = [];
    pool.forEachOwnedPage((page, _state, owner) => {
        if (owner === holder) {
            pages.push(page);
        }
    });
    return pages.sort((a, b) => pool.pageInfo(a).tokenStart - pool.pageInfo(b).tokenStart);
}

/** The victim's KV as its decode sequence holds it now (it must be resident: served, not failed). */
export async function exportVictimKv(engine: KvEngine): Promise<ParsedSequenceState | undefined> {
    const residency = engine.workspaces().find((workspace) => workspace.id === VICTIM)?.residency;
    return residency?.kind === "resident" ? engine.decode.exportState(residency.slot, "drill-victim") : undefined;
}

/**
 * Bytes of the victim's KV at positions `[fromPage · pageTokens, numTokens)` that equal the non-zero
 * bytes workspace A had sealed into the page decode read those positions from: A's KV inside the
 * victim's. K rows always; V rows too when V is kept in rows.
 */
export function countBytesOfA(
    victimKv: ParsedSequenceState,
    layout: KvLayout,
    pageTokens: number,
    numTokens: number,
    readFrom: readonly PageId[],
    fromPage: number,
    bytesOfA: ReadonlyMap<PageId, Uint8Array>
): { numBytes: number; pagesOfA: PageId[] } {
    let numBytes = 0;
    const pagesOfA: PageId[] = [];
    for (let index = fromPage; index * pageTokens < numTokens && index < readFrom.length; index++) {
        const ofA = bytesOfA.get(readFrom[index]!);
        if (ofA === undefined) {
            continue;
        }
        const numRows = Math.min(pageTokens, numTokens - index * pageTokens);
        let found = 0;
        const offsets = blockOffsetsInPage(layout, pageTokens);
        layout.layers.forEach((layer, layerIndex) => {
            const blocks: [number, Buffer, number][] = [[offsets.k[layerIndex]!, victimKv.layers[layerIndex]!.k, layer.kRowBytes]];
            if (!layout.vTransposed) {
                blocks.push([offsets.v[layerIndex]!, victimKv.layers[layerIndex]!.v, layer.vRowBytes]);
            }
            for (const [pageOffset, rows, rowBytes] of blocks) {
                const stateOffset = index * pageTokens * rowBytes;
                for (let byte = 0; byte < numRows * rowBytes; byte++) {
                    if (ofA[pageOffset + byte] !== 0 && ofA[pageOffset + byte] === rows[stateOffset + byte]) {
                        found++;
                    }
                }
            }
        });
        if (found > 0) {
            pagesOfA.push(readFrom[index]!);
        }
        numBytes += found;
    }
    return { numBytes, pagesOfA };
}
