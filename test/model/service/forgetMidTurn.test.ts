import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../contract/engineProtocol.js";
import type { KvEngineHooks } from "../../../engine/KvEngine.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

const ask = (content: string): ChatMessage[] => [{ role: "user", content }];
const LONG = "Please write a long answer about pages, leases and the scrub before a page is free again.";

// Forgetting a workspace while a turn of it runs (the user deletes the chat mid-answer): the turn
// is cancelled first and the forget waits for it to let go, then forgets. Nothing of the workspace
// is left: no sequence, no page, no request, and the audit is clean.

describe("forgetting a workspace during its turn", () => {
    let runtime: LlamaRuntime;
    let service: EngineService;
    const hooks: KvEngineHooks = {};
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        service = await EngineService.start(
            { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, numDecodeSequences: 1, inPlacePrefillTokens: 8 },
            { runtime, hooks }
        );
    });
    afterAll(async () => {
        await service.dispose();
        await runtime.dispose();
    });

    async function expectForgottenAndClean(workspace: string): Promise<void> {
        expect(service.engine.workspaces().map((record) => record.id)).not.toContain(workspace);
        expect(service.engine.numLiveRequests).toBe(0);
        expect(service.engine.pool.numLiveReservations).toBe(0);
        expect(service.engine.pool.numFreePages).toBe(service.engine.config.numPages);
        expect((await service.audit()).ok).toBe(true);
        // The workspace starts over: nothing of it is held, so nothing is reused.
        const again = await service.chat({
            requestId: `${workspace}-again`,
            workspace,
            messages: ask("Hello again."),
            sampling: { temperature: 0, maxTokens: 3 }
        });
        expect(again.usage.cachedPromptTokens).toBe(0);
        await expectEngineClean(service.engine);
    }

    it("while it decodes: the turn ends cancelled, and the forget resolves once it has let go", async () => {
        let forgotten: Promise<void> | undefined;
        const turn = service.chat(
            { requestId: "f1", workspace: "f", messages: ask(LONG), sampling: { temperature: 0, maxTokens: 64 } },
            (event) => {
                if (event.type === "text") {
                    forgotten ??= service.forgetWorkspace("f");
                }
            }
        );
        await expect(turn).rejects.toMatchObject({
            code: "request_cancelled",
            message: expect.stringMatching(/cancelled during decoding/)
        });
        expect(forgotten).toBeDefined();
        await forgotten;
        await expectForgottenAndClean("f");
    });

    it("while prefill hands its KV over, with a second turn of it waiting: both end cancelled, no page is left", async () => {
        let forgotten: Promise<void> | undefined;
        hooks.onStatus = (_request, status) => {
            if (status.kind === "transferring") {
                forgotten ??= service.forgetWorkspace("g");
            }
        };
        try {
            const first = service.chat({
                requestId: "g1",
                workspace: "g",
                messages: ask(LONG),
                sampling: { temperature: 0, maxTokens: 20 }
            });
            const second = service.chat({
                requestId: "g2",
                workspace: "g",
                messages: ask("And another."),
                sampling: { temperature: 0, maxTokens: 4 }
            });
            // Both outcomes are watched from now on: the second, waiting, is cancelled before the first ends.
            const firstEnds = expect(first).rejects.toMatchObject({
                code: "request_cancelled",
                message: expect.stringMatching(/cancelled during transferring/)
            });
            const secondEnds = expect(second).rejects.toMatchObject({
                code: "request_cancelled",
                message: expect.stringMatching(/during admitted/)
            });
            await firstEnds;
            await secondEnds;
            await forgotten;
        } finally {
            delete hooks.onStatus;
        }
        expect(service.engine.counters.cancelled).toBeGreaterThanOrEqual(3);
        await expectForgottenAndClean("g");
    });

    it("leaves every other workspace's turn alone", async () => {
        let forgotten: Promise<void> | undefined;
        const other = service.chat({
            requestId: "o1",
            workspace: "other",
            messages: ask("Hi."),
            sampling: { temperature: 0, maxTokens: 4 }
        });
        const doomed = service.chat(
            { requestId: "h1", workspace: "h", messages: ask(LONG), sampling: { temperature: 0, maxTokens: 64 } },
            (event) => {
                if (event.type === "text") {
                    forgotten ??= service.forgetWorkspace("h");
                }
            }
        );
        await expect(doomed).rejects.toMatchObject({ code: "request_cancelled" });
        await forgotten;
        expect((await other).usage.completionTokens).toBeGreaterThan(0);
        await service.forgetWorkspace("other");
        await expectForgottenAndClean("h");
    });
});
