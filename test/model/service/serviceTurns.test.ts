import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../contract/engineProtocol.js";
import type { KvEngineHooks } from "../../../engine/KvEngine.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { Conversation } from "../../support/chatDriver.js";
import { TurnEventLog } from "../../support/TurnEventLog.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

const ask = (content: string): ChatMessage[] => [{ role: "user", content }];

describe("the engine service: turns, cancellation, measure, snapshots", () => {
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

    it.each(["prefilling", "transferring", "decoding"] as const)(
        "a cancel while %s ends the turn with an error, keeps no answer, and leaks nothing",
        async (stage) => {
            const controller = new AbortController();
            hooks.onStatus = (_, status) => {
                if (status.kind === stage) {
                    controller.abort();
                }
            };
            const heard = new TurnEventLog();
            await expect(
                service.chat(
                    {
                        requestId: `cancel-${stage}`,
                        workspace: "c",
                        messages: ask("Please write a long answer about pages and leases."),
                        sampling: { temperature: 0, maxTokens: 40 }
                    },
                    heard.listener(),
                    controller.signal
                )
            ).rejects.toMatchObject({ code: "request_cancelled" });
            delete hooks.onStatus;
            expect(service.engine.counters.cancelled).toBeGreaterThan(0);
            const conversation = new Conversation("c");
            const next = await conversation.turn(service, "A new question.");
            expect(next.usage.completionTokens).toBeGreaterThan(0);
            await expectEngineClean(service.engine);
        }
    );

    it("a request waiting in the queue reports its place, and a cancel there leaks nothing", async () => {
        const running = new AbortController();
        const waiting = new AbortController();
        const positions: number[] = [];
        let started!: () => void;
        const firstStarted = new Promise<void>((resolve) => {
            started = resolve;
        });
        const first = service.chat(
            { requestId: "q1", workspace: "q1", messages: ask("first"), sampling: { temperature: 0, maxTokens: 200 } },
            (event) => {
                if (event.type === "text") {
                    started();
                }
            },
            running.signal
        );
        await firstStarted;
        const second = service.chat(
            { requestId: "q2", workspace: "q2", messages: ask("second"), sampling: { temperature: 0, maxTokens: 4 } },
            (event) => {
                if (event.type === "queued") {
                    positions.push(event.position);
                    waiting.abort();
                }
            },
            waiting.signal
        );
        await expect(second).rejects.toMatchObject({ code: "request_cancelled" });
        expect(positions).toEqual([1]);
        running.abort();
        await expect(first).rejects.toMatchObject({ code: "request_cancelled" });
        await expectEngineClean(service.engine);
    });

    it("runs one turn of a workspace at a time, even when two arrive together with sequences free", async () => {
        const two = await EngineService.start(
            { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, numDecodeSequences: 2 },
            { runtime }
        );
        try {
            const events: string[] = [];
            const turn = (name: string) =>
                two.chat(
                    { requestId: name, workspace: "same", messages: ask(`turn ${name}`), sampling: { temperature: 0, maxTokens: 4 } },
                    (event) => {
                        if (event.type === "started" || event.type === "text") {
                            events.push(`${name} ${event.type}`);
                        }
                    }
                );
            await Promise.all([
                turn("a"),
                turn("b"),
                two.chat({ requestId: "c", workspace: "other", messages: ask("other"), sampling: { temperature: 0, maxTokens: 4 } })
            ]);
            // Every token of a streamed before b started: the workspace's turns did not overlap.
            expect(events.indexOf("b started")).toBeGreaterThan(events.lastIndexOf("a text"));
            expect(events[0]).toBe("a started");
            expect(events.filter((event) => event === "a text").length).toBeGreaterThan(0);
            expect(two.engine.audit().ok).toBe(true);
            await expectEngineClean(two.engine);
        } finally {
            await two.dispose();
        }
    });

    it("stop strings end the answer before them and report it as a normal stop", async () => {
        const plain = await service.chat({
            requestId: "s1",
            workspace: "s1",
            messages: ask("Say something."),
            sampling: { temperature: 0, maxTokens: 12 }
        });
        expect(plain.text.length).toBeGreaterThan(4);
        const stop = plain.text.slice(2, 4);
        const streamed = new TurnEventLog();
        const stopped = await service.chat(
            {
                requestId: "s2",
                workspace: "s2",
                messages: ask("Say something."),
                sampling: { temperature: 0, maxTokens: 12, stop: [stop] }
            },
            streamed.listener()
        );
        expect(stopped.finishReason).toBe("stop");
        expect(stopped.text).toBe(plain.text.slice(0, plain.text.indexOf(stop)));
        expect(streamed.texts.join("")).toBe(stopped.text);
        // every event under the turn's own id: the engine's service stamps it, nobody after it
        expect(streamed.requestIds).toEqual(["s2"]);
        await expectEngineClean(service.engine);
    });

    it("refuses malformed turns with a typed error naming the field, and stays healthy", async () => {
        const bad: unknown[] = [
            null,
            "chat",
            { requestId: 1 },
            { requestId: "x", workspace: "w", messages: [], sampling: { temperature: 0, maxTokens: 1 } },
            { requestId: "x", workspace: "w", messages: ask("hi"), sampling: { temperature: -1, maxTokens: 1 } },
            { requestId: "x", workspace: "w", messages: ask("hi"), sampling: { temperature: 0, maxTokens: 0 } },
            { requestId: "x", workspace: "w", messages: [{ role: "tool", content: "x" }], sampling: { temperature: 0, maxTokens: 1 } },
            { requestId: "x", workspace: "w", messages: [{ role: "assistant", content: "x" }], sampling: { temperature: 0, maxTokens: 1 } },
            { requestId: "x", workspace: "w", messages: ask("x".repeat(5_000_000)), sampling: { temperature: 0, maxTokens: 1 } }
        ];
        for (const request of bad) {
            await expect(service.chat(request as never)).rejects.toMatchObject({ code: "invalid_request" });
        }
        const ok = await service.chat({
            requestId: "ok",
            workspace: "ok",
            messages: ask("hello"),
            sampling: { temperature: 0, maxTokens: 3 }
        });
        expect(ok.usage.completionTokens).toBeGreaterThan(0);
        await expectEngineClean(service.engine);
    });

    it("runs a host's turn under the requestId it sent: the engine's request id is that id, and replay finds it by it", async () => {
        const result = await service.chat({
            requestId: "host-turn-1",
            workspace: "ids",
            messages: ask("hello"),
            sampling: { temperature: 0, maxTokens: 3 }
        });
        expect(result.usage.completionTokens).toBeGreaterThan(0);
        expect(service.engine.replayableRequests()).toContain("host-turn-1");
        expect(service.replayableTurns().map((turn) => turn.requestId)).toContain("host-turn-1");
        expect((await service.replay("host-turn-1")).requestId).toBe("host-turn-1");
        await expectEngineClean(service.engine);
    });

    it("measures a draft against what the workspace has left, before sending", async () => {
        const history: ChatMessage[] = [
            { role: "user", content: "hello" },
            { role: "assistant", content: "hi there" }
        ];
        const short = await service.measure("m", history, "a short draft");
        expect(short).toMatchObject({ workspace: "m", limit: 256, fits: true });
        expect(short.draftTokens).toBeGreaterThan(3);
        expect(short.usedTokens).toBeGreaterThan(5);
        expect(short.remainingTokens).toBe(256 - short.usedTokens - short.draftTokens);
        const long = await service.measure("m", history, "too long ".repeat(100));
        expect(long.fits).toBe(false);
        expect(long.remainingTokens).toBeLessThan(0);
    });

    it("snapshots the page map, the workspaces and the counters", async () => {
        await service.chat({
            requestId: "snap",
            workspace: "snap",
            messages: ask("Tell me about snapshots and pages."),
            sampling: { temperature: 0, maxTokens: 3 }
        });
        const snapshot = service.snapshot();
        expect(snapshot.pageMap.numPages).toBe(48);
        expect(Buffer.from(snapshot.pageMap.states, "base64")).toHaveLength(48);
        expect(Buffer.from(snapshot.pageMap.ownerSlots, "base64")).toHaveLength(96);
        expect(snapshot.workspaces).toContainEqual(expect.objectContaining({ workspace: "snap", residency: "resident", running: false }));
        expect(snapshot.roles.map((role) => role.role)).toEqual(["prefill", "decode"]);
        expect(snapshot.counters.requests.finished).toBeGreaterThan(0);
        expect(snapshot.capacities.limit).toBe(256);
        await expectEngineClean(service.engine);
    });
});

describe("a snapshot of 65,536 pages", () => {
    it("is compact enough to push ten times a second", async () => {
        const runtime = await LlamaRuntime.start({ gpu: false });
        const service = await EngineService.start(
            { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, pageTokens: 1, numPages: 65_536, window: 256 },
            { runtime }
        );
        try {
            const snapshot = service.snapshot();
            const bytes = Buffer.byteLength(JSON.stringify(snapshot));
            expect(snapshot.pageMap.numPagesByState.free).toBe(65_536);
            expect(bytes).toBeLessThan(300 * 1024); // 64 KiB of states + 128 KiB of owners, base64
        } finally {
            await service.dispose();
            await runtime.dispose();
        }
    });
});
