import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EngineCommand } from "../../../contract/engineProtocol.js";
import { commandLimits, parseEngineCommand } from "../../../engine/process/parseEngineCommand.js";
import { turnLimits } from "../../../engine/service/validateChatTurn.js";

const chat = {
    type: "chat",
    request: {
        requestId: "r1",
        workspace: "alice",
        messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hello" }
        ],
        sampling: { temperature: 0, maxTokens: 8 }
    }
};

function refused(value: unknown): Extract<ReturnType<typeof parseEngineCommand>, { ok: false }> {
    const parsed = parseEngineCommand(value);
    expect(parsed.ok, JSON.stringify(parsed)).toBe(false);
    if (parsed.ok) {
        throw new Error("unreachable");
    }
    expect(parsed.error.code).toBe("invalid_request");
    expect(parsed.error.message.length).toBeLessThan(700);
    return parsed;
}

describe("parseEngineCommand accepts every well-formed command", () => {
    it.each<[string, EngineCommand]>([
        ["cancel", { type: "cancel", requestId: "r1" }],
        [
            "measure",
            {
                type: "measure",
                callId: "c1",
                workspace: "alice",
                messages: [
                    { role: "user", content: "Hi" },
                    { role: "assistant", content: "Hello" }
                ],
                draft: "next"
            }
        ],
        ["measure with no history", { type: "measure", callId: "c1", workspace: "alice", messages: [], draft: "" }],
        ["snapshot", { type: "snapshot", callId: "c2" }],
        ["forgetWorkspace", { type: "forgetWorkspace", callId: "c3", workspace: "alice" }],
        ["audit", { type: "audit", callId: "c4" }],
        ["replayableTurns", { type: "replayableTurns", callId: "c5" }],
        ["replay", { type: "replay", callId: "c6", requestId: "r1" }],
        ["listDrills", { type: "listDrills", callId: "c7" }],
        ["runDrill", { type: "runDrill", callId: "c8", drillId: "flipped-byte" }],
        [
            "runDrill of a drill the engine does not list (it answers unknown_drill itself)",
            { type: "runDrill", callId: "c9", drillId: "no-such-drill" }
        ],
        ["runCanary", { type: "runCanary", callId: "c10" }],
        [
            "runCanary with its filler's size (the canary checks it against the window)",
            { type: "runCanary", callId: "c11", fillerTokens: 2_048 }
        ],
        ["shutdown", { type: "shutdown" }]
    ])("%s, unchanged", (_, command) => {
        expect(parseEngineCommand(command)).toEqual({ ok: true, command });
    });

    it("chat, with the sampling fields validateChatTurn fills in", () => {
        const parsed = parseEngineCommand(chat);
        expect(parsed).toEqual({
            ok: true,
            command: {
                type: "chat",
                request: {
                    ...chat.request,
                    sampling: { temperature: 0, maxTokens: 8, topP: undefined, topK: undefined, seed: undefined, stop: undefined }
                }
            }
        });
    });

    it("drops unknown fields at every level instead of passing them on", () => {
        const parsed = parseEngineCommand({
            ...chat,
            extra: 1,
            request: {
                ...chat.request,
                extra: "x",
                messages: [{ role: "user", content: "Hi", name: "eve" }],
                sampling: { ...chat.request.sampling, grammar: "x" }
            }
        });
        expect(parsed.ok).toBe(true);
        const command = (parsed as { command: Extract<EngineCommand, { type: "chat" }> }).command;
        expect(Object.keys(command)).toEqual(["type", "request"]);
        expect(Object.keys(command.request)).toEqual(["requestId", "workspace", "messages", "sampling"]);
        expect(command.request.messages).toEqual([{ role: "user", content: "Hi" }]);
        expect("grammar" in command.request.sampling).toBe(false);
        expect(parseEngineCommand({ type: "snapshot", callId: "c", more: { deep: [1] } })).toEqual({
            ok: true,
            command: { type: "snapshot", callId: "c" }
        });
    });
});

describe("parseEngineCommand refuses, with a bounded message, and says whom to answer", () => {
    it.each([null, undefined, 42, "chat", true, [chat], () => chat])("a non-object (%s): nobody to answer", (value) => {
        const result = refused(value);
        expect(result.reply).toBeUndefined();
        expect(result.error.message).toMatch(/The command must be an object/);
    });

    it.each([undefined, 7, "", "launch", "__proto__", "constructor", ["chat"]])("an unknown type (%s)", (type) => {
        const result = refused({ type, requestId: "r1", callId: "c1" });
        expect(result.reply).toBeUndefined();
        expect(result.error.message).toMatch(
            /type is .*; expected one of chat, cancel, measure, snapshot, forgetWorkspace, audit, replayableTurns, replay, listDrills, runDrill, runCanary, shutdown/
        );
    });

    it("a chat with a bad field is answered with failed(invalid_request) when its requestId can be read", () => {
        const result = refused({ ...chat, request: { ...chat.request, sampling: { temperature: "hot", maxTokens: 8 } } });
        expect(result.error.message).toMatch(/sampling.temperature must be a number in \[0, 2\]; got "hot"/);
        expect(result.reply).toEqual({ type: "failed", requestId: "r1", error: result.error });
    });

    it.each([
        ["no request", { type: "chat" }],
        ["request is a list", { type: "chat", request: [] }],
        ["requestId is a number", { type: "chat", request: { ...chat.request, requestId: 1 } }],
        ["requestId is too long", { type: "chat", request: { ...chat.request, requestId: "r".repeat(commandLimits.maxIdChars + 1) } }]
    ])("a chat whose requestId cannot be read (%s) has nobody to answer", (_, value) => {
        expect(refused(value).reply).toBeUndefined();
    });

    it.each([
        ["missing messages", { ...chat.request, messages: undefined }],
        ["empty messages", { ...chat.request, messages: [] }],
        ["a message is null", { ...chat.request, messages: [null] }],
        ["a bad role", { ...chat.request, messages: [{ role: "root", content: "x" }] }],
        ["last message not the user's", { ...chat.request, messages: [{ role: "assistant", content: "x" }] }],
        ["empty workspace", { ...chat.request, workspace: "" }],
        ["workspace an object", { ...chat.request, workspace: { name: "alice" } }],
        ["maxTokens fractional", { ...chat.request, sampling: { temperature: 0, maxTokens: 1.5 } }],
        ["maxTokens NaN-ish", { ...chat.request, sampling: { temperature: 0, maxTokens: null } }],
        ["stop not a list", { ...chat.request, sampling: { temperature: 0, maxTokens: 8, stop: "\n" } }],
        ["nested garbage", { ...chat.request, messages: [[[[[{ role: "user" }]]]]] }]
    ])("a chat with %s", (_, request) => {
        expect(refused({ type: "chat", request }).reply).toMatchObject({ type: "failed", requestId: "r1" });
    });

    it("an oversized message, without echoing it", () => {
        const content = "x".repeat(turnLimits.maxMessageChars + 1);
        const result = refused({ type: "chat", request: { ...chat.request, messages: [{ role: "user", content }] } });
        expect(result.error.message).toBe("messages[0].content has 4,000,001 characters; the limit is 4,000,000.");
        expect(result.reply).toMatchObject({ type: "failed", requestId: "r1" });
    });

    it("a conversation over the total limit though every message is within its own", () => {
        const content = "y".repeat(turnLimits.maxMessageChars);
        const numMessages = Math.floor(commandLimits.maxConversationChars / turnLimits.maxMessageChars) + 1;
        const messages = Array.from({ length: numMessages }, (_, index) => ({ role: index % 2 === 0 ? "user" : "assistant", content }));
        messages.push({ role: "user", content: "?" });
        const result = refused({ type: "chat", request: { ...chat.request, messages } });
        expect(result.error.message).toMatch(/^The conversation has 20,000,001 characters; the limit is 16,000,000\. Start a new chat\.$/);
    });

    it("a value quoted in an error is cut short", () => {
        const result = refused({
            type: "chat",
            request: { ...chat.request, sampling: { temperature: 0, maxTokens: 8, topP: "p".repeat(100_000) } }
        });
        expect(result.error.message).toMatch(/… \(100,\d{3} characters\)$/);
    });

    it("a measure, snapshot or forgetWorkspace with a readable callId is answered with its own event type", () => {
        expect(refused({ type: "measure", callId: "c1", workspace: "alice", messages: "hi", draft: "" }).reply).toMatchObject({
            type: "measured",
            callId: "c1",
            error: { code: "invalid_request" }
        });
        expect(refused({ type: "measure", callId: "c1", workspace: "alice", messages: [], draft: 5 }).reply).toMatchObject({
            type: "measured",
            callId: "c1"
        });
        expect(refused({ type: "measure", callId: "c1", workspace: "", messages: [], draft: "" }).reply).toMatchObject({
            type: "measured",
            callId: "c1"
        });
        expect(refused({ type: "forgetWorkspace", callId: "c3" }).reply).toMatchObject({
            type: "forgotten",
            callId: "c3",
            error: { code: "invalid_request" }
        });
        expect(refused({ type: "measure", callId: 3, workspace: "alice", messages: [], draft: "" }).reply).toBeUndefined();
        expect(refused({ type: "snapshot" }).reply).toBeUndefined();
        expect(refused({ type: "snapshot", callId: "" }).reply).toBeUndefined();
    });

    it("an isolation call with a readable callId is answered with its own event type; ids and drill ids are bounded", () => {
        expect(refused({ type: "replay", callId: "c1" }).reply).toMatchObject({
            type: "replayed",
            callId: "c1",
            error: { code: "invalid_request" }
        });
        expect(refused({ type: "replay", callId: "c1", requestId: "" }).error.message).toBe("requestId is empty.");
        expect(refused({ type: "replay", callId: "c1", requestId: 7 }).error.message).toBe("requestId must be a string; got 7.");
        const huge = refused({ type: "replay", callId: "c1", requestId: "r".repeat(100_000) });
        expect(huge.error.message).toBe("requestId has 100,000 characters; the limit is 256.");
        expect(huge.reply).toMatchObject({ type: "replayed", callId: "c1" });
        expect(refused({ type: "runDrill", callId: "c2", drillId: "d".repeat(commandLimits.maxIdChars + 1) }).reply).toMatchObject({
            type: "drillReport",
            callId: "c2",
            error: { message: "drillId has 257 characters; the limit is 256." }
        });
        expect(refused({ type: "runDrill", callId: "c2", drillId: ["flipped-byte"] }).reply).toMatchObject({
            type: "drillReport",
            callId: "c2"
        });
        expect(refused({ type: "runDrill", callId: "c2" }).error.message).toBe("drillId must be a string; got undefined.");
        expect(refused({ type: "audit", callId: "" }).reply).toBeUndefined();
        expect(refused({ type: "replayableTurns", callId: 1 }).reply).toBeUndefined();
        expect(refused({ type: "listDrills", callId: "x".repeat(commandLimits.maxIdChars + 1) }).reply).toBeUndefined();
        expect(refused({ type: "runDrill", drillId: "flipped-byte" }).reply).toBeUndefined();
    });

    it("drops unknown fields of an isolation call", () => {
        expect(parseEngineCommand({ type: "runDrill", callId: "c", drillId: "late-write", guards: "off" })).toEqual({
            ok: true,
            command: { type: "runDrill", callId: "c", drillId: "late-write" }
        });
        expect(parseEngineCommand({ type: "audit", callId: "c", scanFreePages: false })).toEqual({
            ok: true,
            command: { type: "audit", callId: "c" }
        });
        expect(parseEngineCommand({ type: "runCanary", callId: "c", guards: "off" })).toEqual({
            ok: true,
            command: { type: "runCanary", callId: "c" }
        });
    });

    it("refuses a canary run whose filler is not a whole number of tokens, answering canaryReport", () => {
        for (const fillerTokens of [0, -5, 1.5, "64", Number.NaN, 2 ** 60, null]) {
            expect(refused({ type: "runCanary", callId: "c", fillerTokens }).reply).toMatchObject({
                type: "canaryReport",
                callId: "c",
                error: { code: "invalid_request" }
            });
        }
    });

    it("a sparse list of messages (structured clone keeps holes) is refused, not skipped", () => {
        const messages: unknown[] = [];
        messages[2] = { role: "user", content: "x" };
        expect(refused({ type: "measure", callId: "c1", workspace: "alice", messages, draft: "" }).error.message).toMatch(
            /messages\[0\] must be an object/
        );
        expect(refused({ type: "chat", request: { ...chat.request, messages } }).reply).toMatchObject({ type: "failed", requestId: "r1" });
    });

    it("a cancel without a requestId, and one whose requestId is not a string", () => {
        expect(refused({ type: "cancel" }).reply).toBeUndefined();
        expect(refused({ type: "cancel", requestId: { id: "r1" } }).reply).toBeUndefined();
    });

    it("getters that throw, on an object structured clone could not have made, still give a value", () => {
        const hostile = {
            type: "chat",
            get request(): never {
                throw new RangeError("boom");
            }
        };
        expect(refused(hostile).error.message).toBe("The command could not be read: boom.");
    });
});

describe("parseEngineCommand is total", () => {
    it("returns, never throws, for any JSON value and any value structured clone could carry", () => {
        fc.assert(
            fc.property(fc.oneof(fc.jsonValue(), fc.anything()), (value) => {
                const parsed = parseEngineCommand(value);
                expect(typeof parsed.ok).toBe("boolean");
            }),
            { numRuns: 2_000 }
        );
    });

    it("returns for commands one mutation away from a valid chat, and what it accepts parses to itself", () => {
        const paths = [
            ["type"],
            ["request"],
            ["request", "requestId"],
            ["request", "workspace"],
            ["request", "messages"],
            ["request", "messages", 0],
            ["request", "messages", 0, "role"],
            ["request", "messages", 0, "content"],
            ["request", "sampling"],
            ["request", "sampling", "maxTokens"],
            ["request", "sampling", "temperature"],
            ["request", "sampling", "stop"],
            ["request", "sampling", "seed"]
        ] as const;
        fc.assert(
            fc.property(fc.constantFrom(...paths), fc.anything(), (path, replacement) => {
                const mutated = structuredClone({
                    ...chat,
                    request: { ...chat.request, messages: [{ role: "user", content: "Hello" }] }
                }) as Record<string, unknown>;
                let target: Record<string | number, unknown> = mutated;
                for (const key of path.slice(0, -1)) {
                    target = target[key] as Record<string | number, unknown>;
                }
                target[path.at(-1)!] = replacement;
                const parsed = parseEngineCommand(mutated);
                if (parsed.ok) {
                    expect(parseEngineCommand(parsed.command)).toEqual(parsed);
                } else if (parsed.reply !== undefined) {
                    expect(parsed.reply).toMatchObject({ type: "failed", requestId: expect.any(String) });
                }
            }),
            { numRuns: 2_000 }
        );
    });

    it("returns for isolation calls with any field replaced, and answers each refusal it can address with the call's own event", () => {
        const answers: Record<string, string> = {
            audit: "audited",
            replayableTurns: "replayableTurns",
            replay: "replayed",
            listDrills: "drills",
            runDrill: "drillReport"
        };
        const valid = [
            { type: "audit", callId: "c" },
            { type: "replayableTurns", callId: "c" },
            { type: "replay", callId: "c", requestId: "r" },
            { type: "listDrills", callId: "c" },
            { type: "runDrill", callId: "c", drillId: "flipped-byte" }
        ];
        fc.assert(
            fc.property(
                fc.constantFrom(...valid),
                fc.constantFrom("callId", "requestId", "drillId"),
                fc.anything(),
                (command, field, replacement) => {
                    const mutated: Record<string, unknown> = { ...command, [field]: replacement };
                    const parsed = parseEngineCommand(mutated);
                    if (parsed.ok) {
                        expect(parseEngineCommand(parsed.command)).toEqual(parsed);
                    } else if (parsed.reply !== undefined) {
                        expect(parsed.reply).toEqual({ type: answers[command.type], callId: "c", error: parsed.error });
                    }
                }
            ),
            { numRuns: 2_000 }
        );
    });
});
