import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MemoryEvent, MemoryEventKind } from "../../../contract/memoryEvents.js";
import { MemoryEventLog } from "../../../engine/audit/MemoryEventLog.js";
import { workspaceId } from "../../../engine/core/ids.js";
import { KvEngine, type KvEngineHooks } from "../../../engine/KvEngine.js";
import type { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { startTestRuntime } from "../../support/testRuntime.js";
import { expectEngineClean, freshWorkspace, promptOf, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

/** 39 handed-off positions: three pages of 16, the last partly filled. */
const NUM_PROMPT_TOKENS = 40;
const MAX_TOKENS = 4;

describe("the engine's memory timeline records handoffs, swaps and refusals with their pages and states", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    const log = new MemoryEventLog();
    const hooks: KvEngineHooks = {};

    beforeAll(async () => {
        runtime = await startTestRuntime();
        engine = await KvEngine.start(
            { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig },
            { runtime, hooks, memoryEvents: log }
        );
    });
    afterAll(async () => {
        await engine.dispose();
        await runtime.dispose();
    });

    function eventsSince(seq: number): readonly MemoryEvent[] {
        return log.after(seq).events;
    }
    function only(events: readonly MemoryEvent[], kind: MemoryEventKind): MemoryEvent[] {
        return events.filter((event) => event.kind === kind);
    }

    it("a handoff: started, reserved, sealed with checksums, verified, released and scrubbed, all on the request's pages", async () => {
        const before = log.lastSeq;
        const workspace = freshWorkspace();
        await engine.generate({ workspace, promptTokens: promptOf(engine, NUM_PROMPT_TOKENS), maxTokens: MAX_TOKENS });
        const events = eventsSince(before);
        const kinds = events.map((event) => event.kind);
        expect(kinds.indexOf("handoffStarted")).toBeGreaterThanOrEqual(0);
        expect(kinds.indexOf("handoffStarted")).toBeLessThan(kinds.indexOf("reserved"));
        expect(kinds.indexOf("reserved")).toBeLessThan(kinds.indexOf("sealed"));
        expect(kinds.indexOf("sealed")).toBeLessThan(kinds.indexOf("verified"));
        expect(kinds.indexOf("verified")).toBeLessThan(kinds.indexOf("released"));

        const [started] = only(events, "handoffStarted");
        expect(started).toMatchObject({ workspace, numTokens: NUM_PROMPT_TOKENS - 1, outcome: "ok" });
        const [reserved] = only(events, "reserved");
        expect(reserved).toMatchObject({ workspace, requestId: started!.requestId, pageState: "reserved", outcome: "ok" });
        expect(reserved!.pages).toHaveLength(3);
        const [sealed] = only(events, "sealed");
        expect(sealed).toMatchObject({ workspace, pages: reserved!.pages, pageState: "sealed", generation: reserved!.generation });
        expect(sealed!.checksums).toHaveLength(3);
        expect(sealed!.checksums!.every((checksum) => /^[0-9a-f]{16}$/.test(checksum))).toBe(true);
        const [verified] = only(events, "verified");
        expect(verified).toMatchObject({ pages: reserved!.pages, pageState: "sealed", checksums: sealed!.checksums });
        const [released] = only(events, "released");
        expect(released).toMatchObject({ workspace, pages: reserved!.pages, pageState: "quarantined", generation: reserved!.generation });
        const scrubbed = only(events, "scrubbed").flatMap((event) => event.pages ?? []);
        expect(new Set(scrubbed)).toEqual(new Set(reserved!.pages));
        expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => before + 1 + index));
    });

    it("a byte flipped after sealing: the verification is refused on the request's pages", async () => {
        const before = log.lastSeq;
        hooks.afterSeal = (manifest, pool) => {
            pool.injectByteFlip(manifest.pages[1]!, manifest.generation, 100);
        };
        try {
            await expect(
                engine.generate({ workspace: freshWorkspace(), promptTokens: promptOf(engine, NUM_PROMPT_TOKENS), maxTokens: MAX_TOKENS })
            ).rejects.toMatchObject({ code: "handoff_checksum_mismatch" });
        } finally {
            delete hooks.afterSeal;
        }
        const [refused] = only(eventsSince(before), "integrityRefused");
        expect(refused).toMatchObject({ outcome: "refused", pageState: "sealed" });
        expect(refused!.pages!.length).toBeGreaterThanOrEqual(1);
        expect(only(eventsSince(before), "verified")).toEqual([]);
    });

    it("a swap: a third workspace on two decode sequences swaps the least recent out into sealed pages, and back in", async () => {
        const [first, second, third] = ["swap-a", "swap-b", "swap-c"].map((name) => workspaceId(name));
        const prompt = promptOf(engine, NUM_PROMPT_TOKENS);
        await engine.generate({ workspace: first!, promptTokens: prompt, maxTokens: MAX_TOKENS });
        await engine.generate({ workspace: second!, promptTokens: prompt, maxTokens: MAX_TOKENS });
        const before = log.lastSeq;
        await engine.generate({ workspace: third!, promptTokens: prompt, maxTokens: MAX_TOKENS });
        const [out] = only(eventsSince(before), "swappedOut");
        expect(out).toMatchObject({ workspace: first, pageState: "sealed", outcome: "ok" });
        expect(out!.pages!.length).toBeGreaterThanOrEqual(1);

        const beforeIn = log.lastSeq;
        await engine.generate({ workspace: first!, promptTokens: prompt, maxTokens: MAX_TOKENS });
        const [back] = only(eventsSince(beforeIn), "swappedIn");
        expect(back).toMatchObject({ workspace: first, pages: out!.pages, generation: out!.generation, outcome: "ok" });
    });

    it("a refusal at the door: its numbers, no pages, and nothing reserved", async () => {
        const before = log.lastSeq;
        const workspace = freshWorkspace();
        await expect(engine.generate({ workspace, promptTokens: promptOf(engine, 200), maxTokens: 100 })).rejects.toMatchObject({
            code: "context_length_exceeded"
        });
        const events = eventsSince(before);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ kind: "refused", workspace, outcome: "refused", numTokens: 300 });
        expect(events[0]!.pages).toBeUndefined();
        expect(events[0]!.detail).toContain("needs 200 prompt + 100 answer tokens; the limit is 256");
        await expectEngineClean(engine);
    });
});
