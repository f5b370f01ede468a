// What the UI draws, pushed up to ten times a second: compact for 65,536 pages (two base64
// typed arrays, ~256 KiB), no per-page objects.

import type { AuditFeed } from "./isolation.js";

/** Page states, as `PageState` numbers: 0 free, 1 reserved, 2 written, 3 sealed, 4 quarantined. */
export const pageStateNames = ["free", "reserved", "written", "sealed", "quarantined"] as const;
export type PageStateName = (typeof pageStateNames)[number];

export interface PageMapSnapshot {
    readonly numPages: number;
    readonly pageTokens: number;
    readonly pageBytes: number;
    /** base64 of a Uint8Array: each page's state number. */
    readonly states: string;
    /** base64 of a little-endian Uint16Array: 0 for no owner, else `k` meaning `owners[k − 1]`. */
    readonly ownerSlots: string;
    /** Workspaces owning pages, by slot. */
    readonly owners: readonly string[];
    readonly numPagesByState: Readonly<Record<PageStateName, number>>;
    readonly numActiveLeases: number;
}

export interface WorkspaceUsage {
    readonly workspace: string;
    /** Where its KV is: in a decode sequence, swapped out into pages, or nowhere (recomputed on its next turn). */
    readonly residency: "resident" | "swapped" | "none";
    /** Decode sequence index while resident. */
    readonly sequence?: number;
    /** Tokens of KV the engine holds for it. */
    readonly heldTokens: number;
    readonly running: boolean;
    readonly numSwapOuts: number;
    readonly numSwapIns: number;
}

export interface RoleOccupancy {
    readonly role: "prefill" | "decode" | "unified";
    readonly numSequences: number;
    readonly numBusySequences: number;
    /** Tokens one sequence holds, measured. */
    readonly sequenceCapacity: number;
}

export interface EngineSnapshot {
    /** Milliseconds since the engine started. */
    readonly at: number;
    readonly pageMap: PageMapSnapshot;
    readonly workspaces: readonly WorkspaceUsage[];
    readonly roles: readonly RoleOccupancy[];
    readonly capacities: {
        readonly window: number;
        readonly prefill: number;
        readonly decode: number;
        readonly pool: number;
        readonly limit: number;
    };
    readonly numQueued: number;
    readonly counters: {
        readonly requests: { readonly finished: number; readonly rejected: number; readonly cancelled: number; readonly failed: number };
        readonly integrityFailures: number;
        readonly staleWritesRefused: number;
        /** Replayed completions (docs/FAILURE-MODES.md): late or duplicate ones ignored by their (request, generation) tag. */
        readonly staleCompletionsIgnored: number;
        readonly pagesScrubbed: number;
        readonly swapOuts: number;
        readonly swapIns: number;
        readonly swapDrops: number;
        readonly generatedTokens: number;
        readonly evaluatedPromptTokens: number;
        readonly reusedPromptTokens: number;
    };
    /** Generated tokens per second over the last few seconds, all workspaces together. */
    readonly tokensPerSecond: number;
    /** The engine's own audits, run on a timer: absent when it runs none (an engine in a test's process). */
    readonly audit?: AuditFeed;
}
