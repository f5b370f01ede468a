// The turn's one schema, as the engine runs it (EngineService.chat) after the host ran it on the
// RPC's chat: the checks that only the engine's hand validators made before are here now.
import { describe, expect, it } from "vitest";
import { readWith } from "../../../contract/rpc/fieldSchemas.js";
import { chatTurnSchema } from "../../../contract/rpc/turnSchemas.js";

const turn = {
    requestId: "r1",
    workspace: "alice",
    messages: [{ role: "user", content: "What time is it?" }],
    sampling: { temperature: 0, maxTokens: 8 }
};
const calledTool = {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "c1", name: "get_time", arguments: "{}", result: "noon" }]
};

function reason(value: Record<string, unknown>): string {
    const read = readWith(chatTurnSchema, { ...turn, ...value });
    return read.ok ? "accepted" : read.reason;
}

describe("chatTurnSchema", () => {
    it("reads a turn, dropping fields it does not know, and the empty stop strings", () => {
        const read = readWith(chatTurnSchema, { ...turn, extra: 1, sampling: { ...turn.sampling, stop: ["", "\n"] } });
        expect(read).toEqual({ ok: true, value: { ...turn, sampling: { ...turn.sampling, stop: ["\n"] } } });
    });

    it("reads a raw prompt in place of messages, and tools with an answered call last", () => {
        expect(reason({ messages: [], prompt: { tokens: [1, 2, 3] } })).toBe("accepted");
        expect(reason({ messages: [], prompt: { text: "Once upon" } })).toBe("accepted");
        expect(reason({ sampling: { ...turn.sampling, xtc: { probability: 0.5, threshold: 0.1 } } })).toBe("accepted");
        expect(reason({ messages: [...turn.messages, calledTool], tools: [{ name: "get_time" }] })).toBe("accepted");
    });

    it("refuses each field the engine's hand validators refused, naming it", () => {
        expect(reason({ workspace: "kvault-canary:a:0123456789abcdef" })).toMatch(/^workspace names beginning with "kvault-canary:"/);
        expect(reason({ workspace: "" })).toMatch(/^workspace is empty/);
        expect(reason({ messages: [] })).toMatch(/^messages must be a list of 1 to 10,000 messages/);
        expect(reason({ prompt: { text: "x" } })).toBe("messages must be an empty list when a raw prompt is given.");
        expect(reason({ messages: [], prompt: { text: "x", tokens: [1] } })).toBe("prompt must be {text} or {tokens}, one of the two.");
        expect(reason({ messages: [], prompt: { tokens: [] } })).toMatch(/^prompt\.tokens must be a list of 1 to/);
        expect(reason({ messages: [], prompt: { tokens: [1, -1] } })).toMatch(/^prompt\.tokens\[1\] must be a whole number/);
        expect(reason({ messages: [{ role: "tool", content: "x" }] })).toMatch(/^messages\[0\]\.role must be/);
        expect(reason({ messages: [{ role: "assistant", content: "x" }] })).toMatch(/last message must be the user's, or an assistant's/);
        expect(reason({ messages: [{ ...calledTool, toolCalls: [{ ...calledTool.toolCalls[0], result: undefined }] }] })).toMatch(
            /last message must be the user's/
        );
        expect(reason({ messages: [{ role: "user", content: "x", toolCalls: calledTool.toolCalls }] })).toMatch(
            /^messages\[0\] toolCalls is an assistant message's; this message's role is "user"/
        );
        expect(reason({ messages: [{ ...calledTool, toolCalls: [] }, ...turn.messages] })).toMatch(
            /^messages\[0\]\.toolCalls must be a list of 1 to 128 calls/
        );
        expect(reason({ tools: [{ name: "a" }, { name: "a" }] })).toMatch(/^tools name "a" twice; each tool needs its own/);
        expect(reason({ tools: [{ name: "bad name" }] })).toMatch(/^tools\[0\]\.name must be 1 to 64 letters/);
        expect(reason({ tools: [{ name: "t", parameters: 7 }] })).toMatch(/^tools\[0\]\.parameters must be a JSON object/);
        expect(reason({ sampling: { ...turn.sampling, grammar: { kind: "yaml" } } })).toMatch(
            /^sampling\.grammar\.kind must be "json", "jsonSchema" or "toolCalls"/
        );
        expect(reason({ sampling: { ...turn.sampling, xtc: { probability: 0.5, threshold: 2 } } })).toMatch(
            /^sampling\.xtc\.threshold must be a number in \[0, 1\]; got 2\./
        );
        expect(reason({ sampling: { ...turn.sampling, xtc: { probability: 0.5 } } })).toMatch(/^sampling\.xtc\.threshold must be a number/);
        expect(reason({ sampling: { ...turn.sampling, tokenBias: [{ token: 2 ** 31, bias: 1 }] } })).toMatch(
            /^sampling\.tokenBias\[0\]\.token must be a whole number/
        );
    });
});
