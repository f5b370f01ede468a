import { pageStateNames, type EngineSnapshot } from "../../contract/EngineSnapshot.js";
import type { KvEngine } from "../KvEngine.js";
import { kvMemoryOf } from "./kvMemoryOf.js";
import { snapshotSequences } from "./snapshotSequences.js";

/** What a snapshot carries that the engine itself does not keep: its time, throughput and audit feed. */
export type SnapshotExtras = Pick<EngineSnapshot, "at" | "tokensPerSecond" | "audit">;

/**
 * The engine as the UI draws it, now: the page map (states and owners as base64 typed arrays, so
 * a pool of 65,536 pages stays small enough to send ten times a second, and the details of the
 * pages that are not free), every sequence of both contexts with the positions it holds and its
 * workspace, the handoffs in flight, every workspace and where its KV is, the measured
 * capacities and the counters.
 */
export function snapshotEngine(engine: KvEngine, extras: SnapshotExtras): EngineSnapshot {
    const pool = engine.pool.snapshot();
    const ownerSlots = new Uint16Array(pool.ownerSlots.length);
    ownerSlots.set(pool.ownerSlots);
    const counters = engine.counters;
    const poolCounters = engine.pool.counters;
    const roles = snapshotRoles(engine);
    return {
        at: extras.at,
        pageMap: {
            numPages: engine.pool.config.numPages,
            pageTokens: engine.pool.config.pageTokens,
            pageBytes: engine.pool.config.pageBytes,
            states: Buffer.from(pool.states.buffer, pool.states.byteOffset, pool.states.byteLength).toString("base64"),
            ownerSlots: base64(ownerSlots),
            owners: [...pool.workspaces],
            numPagesByState: Object.fromEntries(
                pageStateNames.map((name, state) => [name, pool.numPagesByState[state] ?? 0])
            ) as EngineSnapshot["pageMap"]["numPagesByState"],
            numActiveLeases: pool.numActiveLeases,
            ownedPages: {
                count: pool.ownedPages.generations.length,
                generations: base64(pool.ownedPages.generations),
                tokenStarts: base64(pool.ownedPages.tokenStarts),
                tokenCounts: base64(pool.ownedPages.tokenCounts),
                validBytes: base64(pool.ownedPages.validBytes),
                checksums: base64(pool.ownedPages.checksums)
            }
        },
        sequences: snapshotSequences(engine),
        bytesPerToken: engine.pool.config.pageBytes / engine.pool.config.pageTokens,
        handoffs: engine.handoffs(),
        workspaces: engine.workspaces().map((workspace) => ({
            workspace: workspace.id,
            residency: workspace.residency.kind,
            ...(workspace.residency.kind === "resident" ? { sequence: workspace.residency.slot.index } : {}),
            heldTokens: workspace.heldTokens.length,
            running: workspace.busy,
            numSwapOuts: workspace.numSwapOuts,
            numSwapIns: workspace.numSwapIns
        })),
        roles,
        capacities: { ...engine.window.capacities, limit: engine.window.limit },
        numQueued: engine.numQueued,
        counters: {
            requests: {
                finished: counters.finished,
                rejected: counters.rejected,
                cancelled: counters.cancelled,
                failed: counters.failed
            },
            integrityFailures: counters.integrityFailures,
            staleWritesRefused: poolCounters.staleWritesRefused,
            staleCompletionsIgnored: counters.staleCompletionsIgnored,
            pagesScrubbed: poolCounters.pagesScrubbed,
            swapOuts: counters.swapOuts,
            swapIns: counters.swapIns,
            swapDrops: counters.swapDrops,
            generatedTokens: counters.generatedTokens,
            evaluatedPromptTokens: counters.evaluatedPromptTokens,
            reusedPromptTokens: counters.reusedPromptTokens,
            acceptedDraftTokens: counters.validatedDraftTokens,
            rejectedDraftTokens: counters.refutedDraftTokens
        },
        tokensPerSecond: extras.tokensPerSecond,
        ...(extras.audit === undefined ? {} : { audit: extras.audit })
    };
}

/**
 * What holds KV, in the snapshot's terms but without its page map: each context's sequences and
 * the pool's page counts (EngineService.kvHolders), so the status bar's twice-a-second poll never
 * encodes a page map of tens of thousands of pages.
 */
export interface KvHolders {
    /** Milliseconds since the engine started, as a snapshot's `at`. */
    readonly at: number;
    readonly roles: EngineSnapshot["roles"];
    readonly sequences: EngineSnapshot["sequences"];
    readonly bytesPerToken: number;
    readonly pool: { readonly numPages: number; readonly numFreePages: number; readonly pageBytes: number };
}

/** Each context's occupancy, prefill (when split) first. */
export function snapshotRoles(engine: KvEngine): EngineSnapshot["roles"][number][] {
    // both contexts of one model: their KV is placed by the same layers
    const kvMemory = kvMemoryOf(engine.compute);
    const roles: EngineSnapshot["roles"][number][] = [
        {
            role: engine.decode.role,
            numSequences: engine.decode.numSequences,
            numBusySequences: engine.decode.numBusySequences,
            sequenceCapacity: engine.decode.sequenceCapacity,
            kvMemory
        }
    ];
    if (engine.prefill) {
        roles.unshift({
            role: "prefill",
            numSequences: engine.prefill.numSequences,
            numBusySequences: engine.prefill.numBusySequences,
            sequenceCapacity: engine.prefill.sequenceCapacity,
            kvMemory
        });
    }
    return roles;
}

/** A typed array's bytes (little-endian on every platform Kvault runs on) as base64. */
function base64(array: ArrayBufferView): string {
    return Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString("base64");
}
