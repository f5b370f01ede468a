import type { PageHolder, RequestId } from "../core/ids.js";
import type { PagePool } from "../pages/PagePool.js";
import { ViolationLog, type AuditOptions, type AuditResult } from "../pages/AuditResult.js";
import { PageState } from "../pages/PageState.js";
import type { WorkspaceRecord } from "../workspace/WorkspaceRecord.js";

export interface EngineAuditView {
    readonly pool: PagePool;
    readonly workspaces: readonly WorkspaceRecord[];
    /** Requests not yet terminal, with the reservation each holds (if any). */
    readonly liveRequests: ReadonlyMap<RequestId, { readonly generation: number | undefined }>;
    /** Swap-outs writing their pages, with the generation each reserved (`WorkspaceTable.swapOutsInFlight`). */
    readonly swapOutsInFlight: ReadonlyMap<PageHolder, number>;
    readonly numDecodeSequences: number;
}

/**
 * Checks I1–I7 over the whole engine: the pool's own audit (I1–I6, and every sealed page's checksum
 * recomputed for I7), then what only the engine knows: every owned page belongs to a live request,
 * to a swap-out writing it, or to a swapped workspace's manifest at its generation, whose checksums
 * equal the pages' (I4, I5, I7), and no decode sequence is held by two workspaces (I1).
 */
export function auditEngine(view: EngineAuditView, options: AuditOptions = {}): AuditResult {
    const startedAt = performance.now();
    const pool = view.pool.audit({ scanFreePages: options.scanFreePages ?? true, verifySealedPages: options.verifySealedPages ?? true });
    const log = new ViolationLog();
    log.add(pool); // the pool's violations first, then the engine's

    const owners = new Map<PageHolder, number>(view.swapOutsInFlight); // holder → generation, from live requests, swap-outs and swapped workspaces
    for (const [request, { generation }] of view.liveRequests) {
        if (generation !== undefined) {
            owners.set(request, generation);
        }
    }
    const sequences = new Map<number, string>();
    for (const workspace of view.workspaces) {
        const residency = workspace.residency;
        if (residency.kind === "resident") {
            const holder = sequences.get(residency.slot.index);
            if (holder !== undefined) {
                log.report("I1", undefined, `decode sequence ${residency.slot.index} is held by workspaces ${holder} and ${workspace.id}`);
            }
            sequences.set(residency.slot.index, workspace.id);
        } else if (residency.kind === "swapped") {
            owners.set(residency.reservation.holder, residency.reservation.generation);
            residency.manifest.pages.forEach((page, index) => {
                const info = view.pool.pageInfo(page);
                if (
                    info.state !== PageState.Sealed ||
                    info.generation !== residency.manifest.generation ||
                    info.workspace !== workspace.id
                ) {
                    log.report(
                        "I5",
                        page,
                        `workspace ${workspace.id}'s swapped page ${page} is ${info.state} at generation ${info.generation}, its manifest says sealed at ${residency.manifest.generation}`
                    );
                } else if (info.checksum !== residency.manifest.checksums[index]) {
                    log.report(
                        "I7",
                        page,
                        `workspace ${workspace.id}'s swapped page ${page} is sealed as ${info.checksum?.toString(16)}, its manifest says ${residency.manifest.checksums[index]?.toString(16)}`
                    );
                }
            });
        }
    }
    if (sequences.size > view.numDecodeSequences) {
        log.report("I1", undefined, `${sequences.size} workspaces are resident on ${view.numDecodeSequences} decode sequences`);
    }

    const numPages = view.pool.config.numPages;
    view.pool.forEachOwnedPage((page, state, holder, pageGeneration) => {
        const generation = owners.get(holder);
        if (generation === undefined) {
            log.report(
                "I4",
                page,
                `page ${page} is ${state === PageState.Sealed ? "sealed" : "owned"} by ${holder}, which is neither running, nor swapping out, nor a swapped workspace`
            );
        } else if (generation !== pageGeneration) {
            log.report("I5", page, `page ${page} is at generation ${pageGeneration}; its owner ${holder} holds generation ${generation}`);
        }
    });
    return {
        ok: log.numViolations === 0,
        violations: log.violations,
        numViolations: log.numViolations,
        numPagesChecked: numPages,
        numFreePagesScanned: pool.numFreePagesScanned,
        numSealedPagesVerified: pool.numSealedPagesVerified,
        numPagesChangedDuringScan: 0,
        durationMs: performance.now() - startedAt
    };
}
