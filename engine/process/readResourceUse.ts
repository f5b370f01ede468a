import type { KvRoleUse, ResourceUse } from "../../contract/resourceUse.js";
import type { EngineService } from "../service/EngineService.js";
import type { KvHolders } from "../service/snapshotEngine.js";

/** What readResourceUse needs of the engine. */
export type ResourceSource = Pick<EngineService, "kvHolders" | "workspaceTokensPerSecond" | "vramState">;

/**
 * The engine process's use of this machine (rpcSpec resourceUse), read here in the engine's own
 * process: its RAM from `process.memoryUsage()`, VRAM from node-llama-cpp, KV bytes from what the
 * engine holds now, tokens per second from the tokens it generated.
 */
export async function readResourceUse(source: ResourceSource): Promise<ResourceUse> {
    const holders = source.kvHolders();
    const vram = await source.vramState();
    const memory = process.memoryUsage();
    const workspaces = source.workspaceTokensPerSecond();
    return {
        at: holders.at,
        process: { pid: process.pid, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
        ...(vram === undefined ? {} : { vram }),
        kv: kvByRole(holders),
        workspaces,
        tokensPerSecond: Math.round(workspaces.reduce((sum, rate) => sum + rate.tokensPerSecond, 0) * 10) / 10
    };
}

/**
 * KV bytes per holder: each context's sequences (positions held, and positions they can hold,
 * × bytes per token; a page is `pageTokens` such positions, so the contexts and the pool count in
 * the same bytes), then the pool (pages not free, and all pages, × page bytes), each with where its
 * bytes are: a context's where its KV lives, the pool's in RAM (host pages).
 */
export function kvByRole(holders: Omit<KvHolders, "at">): KvRoleUse[] {
    const { bytesPerToken, pool } = holders;
    const contexts = holders.roles.map((role): KvRoleUse => {
        const sequences = holders.sequences.filter((sequence) => sequence.role === role.role);
        const usedTokens = sequences.reduce((sum, sequence) => sum + sequence.numTokens, 0);
        const capacityTokens = sequences.reduce((sum, sequence) => sum + sequence.capacity, 0);
        return {
            role: role.role,
            usedBytes: usedTokens * bytesPerToken,
            reservedBytes: capacityTokens * bytesPerToken,
            where: role.kvMemory.where
        };
    });
    return [
        ...contexts,
        {
            role: "pool",
            usedBytes: (pool.numPages - pool.numFreePages) * pool.pageBytes,
            reservedBytes: pool.numPages * pool.pageBytes,
            where: "ram"
        }
    ];
}
