import { expect } from "vitest";
import { workspaceId, type WorkspaceId } from "../../engine/core/ids.js";
import type { EngineConfigInput } from "../../engine/EngineConfig.js";
import { KvEngine, type KvEngineHooks } from "../../engine/KvEngine.js";
import { assertAuditClean } from "./assertAuditClean.js";
import type { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { generatedModelPath } from "./generatedModels.js";

/** Small contexts and 16-token pages, so page boundaries are cheap to reach with the tiny model. */
export const tinyEngineConfig: Omit<EngineConfigInput, "modelPath"> = {
    window: 256,
    prefillContextSize: 256,
    decodeContextSize: 256,
    numDecodeSequences: 2,
    pageTokens: 16,
    numPages: 48,
    inPlacePrefillTokens: 0,
    flashAttention: true,
    gpu: false // the CPU, whatever GPU drivers the machine has (an engine given a runtime uses the runtime's)
};

export async function startTinyEngine(
    runtime: LlamaRuntime,
    overrides: Partial<EngineConfigInput> = {},
    hooks?: KvEngineHooks
): Promise<KvEngine> {
    return KvEngine.start({ modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, ...overrides }, { runtime, hooks });
}

export const alice: WorkspaceId = workspaceId("alice");
export const bob: WorkspaceId = workspaceId("bob");

const LONG_TEXT =
    "Kvault keeps each workspace's KV pages apart; a request that does not fit is refused at the door. " +
    "The prefill context evaluates prompts, the decode context generates, and pages carry the handoff between them. ";

/** Exactly `count` prompt tokens of the engine's model, BOS first. */
export function promptOf(engine: KvEngine, count: number, salt = ""): number[] {
    const tokens = engine.tokenize(salt + LONG_TEXT.repeat(Math.ceil(count / 20) + 2));
    expect(tokens.length).toBeGreaterThanOrEqual(count);
    return tokens.slice(0, count);
}

let numFreshWorkspaces = 0;

/** A workspace the engine has never seen: no KV to reuse. */
export function freshWorkspace(): WorkspaceId {
    return workspaceId(`fresh-${++numFreshWorkspaces}`);
}

/**
 * How every engine test ends: no request live or queued; once the workspaces' KV is
 * forgotten, no page reserved or leased, every page free and zero (I1–I6), every sequence back,
 * no state file left.
 */
export async function expectEngineClean(engine: KvEngine): Promise<void> {
    expect(engine.numLiveRequests).toBe(0);
    expect(engine.numQueued).toBe(0);
    await engine.forgetAllWorkspaces();
    await engine.pool.whenZeroed(); // pages released a moment ago may still be being zeroed off the engine's thread
    expect(engine.workspaces()).toEqual([]);
    expect(engine.pool.numActiveLeases).toBe(0);
    expect(engine.pool.numLiveReservations).toBe(0);
    expect(engine.pool.numFreePages).toBe(engine.config.numPages);
    assertAuditClean(engine.pool.audit({ scanFreePages: true }));
    expect(engine.decode.numFreeSequences).toBe(engine.decode.numSequences);
    if (engine.prefill) {
        expect(engine.prefill.numFreeSequences).toBe(engine.prefill.numSequences);
    }
    expect(engine.stateDirectory.listFiles()).toEqual([]);
}
