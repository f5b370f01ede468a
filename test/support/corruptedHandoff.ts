import { expect } from "vitest";
import type { KvEngine, KvEngineHooks } from "../../engine/KvEngine.js";
import { expectEngineClean, freshWorkspace } from "./engineFixtures.js";

/**
 * Flips a byte of the second page of `prompt`'s handoff after it was sealed (through the engine's
 * `hooks`, which must be the ones it was started with) and checks that the reader refuses it:
 * handoff_checksum_mismatch, no token decoded over it, one integrity failure more, nothing leaked.
 * The caller then checks that the next request is served (against its own reference).
 */
export async function expectCorruptedHandoffRefused(
    engine: KvEngine,
    hooks: KvEngineHooks,
    prompt: readonly number[],
    maxTokens: number
): Promise<void> {
    const integrityFailures = engine.counters.integrityFailures;
    const tokensSeen: number[] = [];
    hooks.afterSeal = (manifest, pool) => {
        pool.injectByteFlip(manifest.pages[1]!, manifest.generation, 100);
    };
    try {
        await expect(
            engine.generate({
                workspace: freshWorkspace(),
                promptTokens: prompt,
                maxTokens,
                onToken: (token) => void tokensSeen.push(token)
            })
        ).rejects.toMatchObject({ code: "handoff_checksum_mismatch", message: expect.stringMatching(/^KV handoff refused: /) });
    } finally {
        delete hooks.afterSeal;
    }
    expect(tokensSeen).toEqual([]);
    expect(engine.counters.integrityFailures).toBe(integrityFailures + 1);
    await expectEngineClean(engine);
}
