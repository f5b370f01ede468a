// What the engine process uses of this machine, now (rpcSpec `resourceUse`), as the status bar
// shows it: read by the engine process itself (engine/process/readResourceUse.ts), never estimated
// by the UI. Bytes are bytes; rates are per second of wall time.

import type { KvMemory } from "./EngineSnapshot.js";

/** One holder of KV: a llama.cpp context's sequences (by role), or the host page pool. */
export interface KvRoleUse {
    /** "prefill" and "decode" are the split contexts, "unified" the one context of unified mode, "pool" the host pages. */
    readonly role: "prefill" | "decode" | "unified" | "pool";
    /** Bytes of KV held now: positions held × bytes per token (a context), or pages not free × page bytes (the pool). */
    readonly usedBytes: number;
    /** Bytes set aside for it: positions it can hold × bytes per token (a context), or every page × page bytes (the pool). */
    readonly reservedBytes: number;
    /** Where these bytes are: a context's KV in device memory, in RAM or split by layer (RoleOccupancy.kvMemory); the pool's pages always in RAM. */
    readonly where: KvMemory["where"];
}

/** Generated tokens per second of one workspace over the last few seconds (only workspaces that generated in them). */
export interface WorkspaceRate {
    readonly workspace: string;
    readonly tokensPerSecond: number;
}

export interface ResourceUse {
    /** Milliseconds since the engine started (the snapshot's `at`). */
    readonly at: number;
    /** The engine process itself: `process.memoryUsage()` there. */
    readonly process: {
        readonly pid: number;
        /** Resident set size: the process's RAM, the model's weights on the CPU included. */
        readonly rssBytes: number;
        /** V8's heap in use (JavaScript objects, the page map's arrays). */
        readonly heapUsedBytes: number;
    };
    /** node-llama-cpp's `getVramState()` of the GPU the engine runs on; absent on the CPU. */
    readonly vram?: { readonly usedBytes: number; readonly totalBytes: number };
    /** The prefill and decode contexts (or the unified one), then the pool. */
    readonly kv: readonly KvRoleUse[];
    /** Per workspace, most tokens per second first. */
    readonly workspaces: readonly WorkspaceRate[];
    /** All workspaces together: the sum of `workspaces`' rates (the same meter, so the two agree). */
    readonly tokensPerSecond: number;
}
