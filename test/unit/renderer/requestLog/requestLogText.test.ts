import { describe, expect, it } from "vitest";
import type { RequestLogEntry } from "../../../../contract/requestLog.js";
import { outcomeText, tokensText } from "../../../../renderer/requestLog/requestLogText.js";

const entry: RequestLogEntry = {
    time: "2026-12-02T02:30:00.000Z",
    endpoint: "POST /v1/chat/completions",
    workspace: "notes",
    promptTokens: 12,
    completionTokens: 8,
    status: 200,
    outcome: "ok",
    ms: 153
};

describe("the request log panel's text", () => {
    it("says the tokens in and out, in only for embeddings, nothing for a request without tokens", () => {
        expect(tokensText(entry)).toBe("12 → 8 tokens");
        expect(tokensText({ ...entry, completionTokens: null })).toBe("12 tokens");
        expect(tokensText({ ...entry, promptTokens: null, completionTokens: null })).toBe("");
    });

    it("says a failure's status and code, and a request that got no answer", () => {
        expect(outcomeText(entry)).toBe("ok");
        expect(outcomeText({ ...entry, status: 400, outcome: "context_length_exceeded" })).toBe("400 context_length_exceeded");
        expect(outcomeText({ ...entry, status: 0, outcome: "closed" })).toBe("no answer closed");
    });
});
