// The family suite's two equivalences, shared with the gpu project (test/gpu/), which runs them on
// the Vulkan device: split mode against unified mode, and a swapped workspace against a resident one.
import { expect } from "vitest";
import type { KvEngine } from "../../../engine/KvEngine.js";
import type { GenerateResult } from "../../../engine/engineTypes.js";
import { expectEngineClean, freshWorkspace, promptOf } from "../../support/engineFixtures.js";

/** Whether the family's KV goes through pages (split mode), or it runs unified for a reason. */
export type FamilyMemory = { readonly paged: true } | { readonly paged: false; readonly reason: RegExp };

/**
 * A `numPromptTokens` prompt on `engine` (split, or unified where the family cannot be paged) and on
 * `unified`: the same greedy tokens, handed off through pages where paged. The caller cleans up.
 */
export async function expectSplitMatchesUnified(
    engine: KvEngine,
    unified: KvEngine,
    memory: FamilyMemory,
    numPromptTokens: number,
    maxTokens: number
): Promise<GenerateResult> {
    const prompt = promptOf(engine, numPromptTokens);
    const served = await engine.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens });
    const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens });
    expect(served.tokens.length).toBeGreaterThan(0);
    expect(new Set(served.tokens).size, "greedy tokens of seeded weights vary").toBeGreaterThan(1);
    expect(served.tokens, `${numPromptTokens}-token prompt`).toEqual(reference.tokens);
    expect(served.numHandedOffTokens).toBe(memory.paged ? numPromptTokens - 1 : 0);
    return served;
}

/**
 * Workspace A answers, B takes its only decode sequence (A is swapped out into pages, or forgotten
 * where the family cannot be paged), and A's next turn reuses its prefix from the pages: its answers
 * are those of a workspace that stayed resident in `unified`. `engine` has one decode sequence.
 */
export async function expectSwapMatchesResident(
    engine: KvEngine,
    unified: KvEngine,
    memory: FamilyMemory,
    maxTokens: number
): Promise<void> {
    const [a, b, resident] = [freshWorkspace(), freshWorkspace(), freshWorkspace()];
    const first = promptOf(engine, 40, "a: ");
    const counters = { ...engine.counters };
    const answer = await engine.generate({ workspace: a, promptTokens: first, maxTokens });
    await engine.generate({ workspace: b, promptTokens: promptOf(engine, 30, "b: "), maxTokens: 4 }); // takes a's sequence
    const evicted = engine.workspaces().find((workspace) => workspace.id === a);
    expect(evicted?.residency.kind).toBe(memory.paged ? "swapped" : "none");
    const next = [...first, ...answer.tokens, ...engine.tokenize(" and then?")];
    const continued = await engine.generate({ workspace: a, promptTokens: next, maxTokens });

    if (memory.paged) {
        expect(engine.counters.swapOuts - counters.swapOuts).toBeGreaterThanOrEqual(1);
        expect(engine.counters.swapIns - counters.swapIns).toBe(1);
        expect(engine.counters.swapDrops).toBe(counters.swapDrops);
        expect(continued.numReusedTokens).toBeGreaterThan(first.length);
    } else {
        // unified mode pages nothing: the evicted workspace held no KV until its turn recomputed it all
        expect(engine.counters.swapOuts).toBe(counters.swapOuts);
        expect(engine.counters.swapDrops).toBe(counters.swapDrops);
        expect(continued.numReusedTokens).toBe(0);
        expect(continued.numEvaluatedTokens).toBe(next.length);
    }

    const residentAnswer = await unified.generate({ workspace: resident, promptTokens: first, maxTokens });
    expect(residentAnswer.tokens).toEqual(answer.tokens);
    const residentContinued = await unified.generate({ workspace: resident, promptTokens: next, maxTokens });
    expect(residentContinued.numReusedTokens).toBeGreaterThan(first.length);
    expect(continued.tokens).toEqual(residentContinued.tokens);
    await expectEngineClean(engine);
    await unified.forgetAllWorkspaces();
}
