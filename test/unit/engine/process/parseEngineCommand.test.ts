import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EngineCommand } from "../../../../contract/engineProtocol.js";
import { fieldLimits } from "../../../../contract/limits.js";
import { parseEngineCommand } from "../../../../engine/process/parseEngineCommand.js";

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

describe("parseEngineCommand reads the envelope of every well-formed command", () => {
    it.each<[string, EngineCommand]>([
        ["cancel", { type: "cancel", requestId: "r1" }],
        ["a call", { type: "call", callId: "c1", method: "measure", params: { workspace: "alice", messages: [], draft: "next" } }],
        ["a call of every engine method", { type: "call", callId: "c2", method: "runCanary", params: { fillerTokens: 2_048 } }],
        ["shutdown", { type: "shutdown" }]
    ])("%s, unchanged", (_, command) => {
        expect(parseEngineCommand(command)).toEqual({ ok: true, command });
    });

    it("a chat: its request as it came, for EngineService.chat to check what only the engine knows", () => {
        expect(parseEngineCommand(chat)).toEqual({ ok: true, command: chat });
        const odd = { ...chat, request: { ...chat.request, workspace: 42 } };
        expect(parseEngineCommand(odd)).toEqual({ ok: true, command: odd });
    });

    it("a call's params as they came: the host checked them against the RPC spec where the call entered it", () => {
        const params = { requestId: "r1", extra: [1, 2] };
        expect(parseEngineCommand({ type: "call", callId: "c", method: "replay", params, more: { deep: [1] } })).toEqual({
            ok: true,
            command: { type: "call", callId: "c", method: "replay", params }
        });
    });
});

describe("parseEngineCommand refuses an envelope it cannot read, with a bounded message, and says whom to answer", () => {
    it.each([null, undefined, 42, "chat", true, [chat], () => chat])("a non-object (%s): nobody to answer", (value) => {
        const result = refused(value);
        expect(result.reply).toBeUndefined();
        expect(result.error.message).toMatch(/The command must be an object/);
    });

    it.each([undefined, 7, "", "launch", "__proto__", "constructor", ["chat"], "measure", "snapshot"])("an unknown type (%s)", (type) => {
        const result = refused({ type, requestId: "r1", callId: "c1" });
        expect(result.reply).toBeUndefined();
        expect(result.error.message).toMatch(/type is .*; expected one of chat, cancel, call, shutdown\.$/);
    });

    it.each([
        ["no request", { type: "chat" }, /^request must be an object; got undefined\.$/],
        ["request is a list", { type: "chat", request: [] }, /^request must be an object; got a list\.$/],
        ["requestId is a number", { type: "chat", request: { ...chat.request, requestId: 1 } }, /^requestId must be a string; got 1\.$/],
        [
            "requestId is too long",
            { type: "chat", request: { ...chat.request, requestId: "r".repeat(fieldLimits.maxIdChars + 1) } },
            /^requestId has 257 characters; it must have 1 to 256\.$/
        ]
    ])("a chat whose requestId cannot be read (%s) has nobody to answer", (_, value, message) => {
        const result = refused(value);
        expect(result.reply).toBeUndefined();
        expect(result.error.message).toMatch(message);
    });

    it("a call the engine does not serve, answered by its callId", () => {
        for (const method of ["inspectModel", "chat", "loadWorkspaces", "__proto__", 7, undefined]) {
            const result = refused({ type: "call", callId: "c1", method, params: {} });
            expect(result.error.message).toMatch(
                /^The call's method is .*; the engine serves measure, snapshot, memoryEvents, forgetWorkspace, audit, replayableTurns, replay, listDrills, runDrill, runCanary, embed, ping, resourceUse, tokenize, tokenizeChat, detokenize\.$/
            );
            expect(result.reply).toEqual({ type: "answer", callId: "c1", error: result.error });
        }
    });

    it("a call whose callId cannot be read has nobody to answer", () => {
        expect(refused({ type: "call", method: "snapshot", params: {} }).reply).toBeUndefined();
        expect(refused({ type: "call", callId: 3, method: "snapshot", params: {} }).reply).toBeUndefined();
        expect(refused({ type: "call", callId: "", method: "snapshot", params: {} }).reply).toBeUndefined();
        expect(refused({ type: "call", callId: "x".repeat(fieldLimits.maxIdChars + 1), method: "snapshot" }).reply).toBeUndefined();
    });

    it("a cancel without a requestId, and one whose requestId is not a string", () => {
        expect(refused({ type: "cancel" }).reply).toBeUndefined();
        expect(refused({ type: "cancel", requestId: { id: "r1" } }).reply).toBeUndefined();
    });

    it("a value quoted in an error is cut short", () => {
        expect(refused({ type: "t".repeat(100_000) }).error.message).toMatch(/a string of 100,000 characters/);
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

    it("returns for commands one mutation away from a valid chat or call; what it accepts parses to itself, a refusal goes to its sender", () => {
        const valid = [chat, { type: "call", callId: "c", method: "replay", params: { requestId: "r" } }];
        const fields = ["type", "request", "callId", "method", "params"] as const;
        fc.assert(
            fc.property(fc.constantFrom(...valid), fc.constantFrom(...fields), fc.anything(), (command, field, replacement) => {
                const mutated: Record<string, unknown> = { ...structuredClone(command), [field]: replacement };
                const parsed = parseEngineCommand(mutated);
                if (parsed.ok) {
                    expect(parseEngineCommand(parsed.command)).toEqual(parsed);
                } else if (parsed.reply !== undefined) {
                    expect(parsed.reply).toEqual(
                        parsed.reply.type === "failed"
                            ? { type: "failed", requestId: "r1", error: parsed.error }
                            : { type: "answer", callId: "c", error: parsed.error }
                    );
                }
            }),
            { numRuns: 2_000 }
        );
    });
});
