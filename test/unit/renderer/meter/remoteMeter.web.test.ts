import { describe, expect, it } from "vitest";
import type { RemoteMeasurement } from "../../../../contract/backends.js";
import { remoteDraftMeasurement, remoteMissing, remoteSourceLines } from "../../../../renderer/meter/remoteMeter.js";

const known: RemoteMeasurement = {
    workspace: "ui-a",
    backend: "gpu",
    model: "m",
    tokens: { kind: "known", source: "vLLM /tokenize (messages)", usedTokens: 1_000, draftTokens: 24 },
    window: { kind: "known", source: "/v1/models max_model_len", tokens: 8_192 },
    kvUsage: { kind: "known", source: "vLLM /metrics vllm:kv_cache_usage_perc", ratio: 0.4213 }
};

describe("the context meter of a remote workspace", () => {
    it("measures against the server's window with the server's counts, and names each source", () => {
        expect(remoteDraftMeasurement(known)).toEqual({
            workspace: "ui-a",
            usedTokens: 1_000,
            draftTokens: 24,
            limit: 8_192,
            remainingTokens: 7_168,
            fits: true
        });
        expect(remoteSourceLines(known).map((line) => line.text)).toEqual([
            "Tokens counted by backend gpu (m): vLLM /tokenize (messages)",
            "Window 8,192 from /v1/models max_model_len",
            "Server KV cache 42.1% in use (all its requests), from vLLM /metrics vllm:kv_cache_usage_perc"
        ]);
    });

    it("says what the server does not give, instead of guessing", () => {
        const silent: RemoteMeasurement = {
            ...known,
            tokens: { kind: "unknown", reason: "no tokenizer endpoint." },
            kvUsage: { kind: "unknown", reason: "no /metrics." }
        };
        expect(remoteDraftMeasurement(silent)).toBeUndefined();
        expect(remoteMissing(silent)).toBe("The context of this workspace on gpu (m) is not shown: Token counts: no tokenizer endpoint.");
        expect(remoteSourceLines(silent).map((line) => line.text)).toEqual([
            "Tokens: no tokenizer endpoint.",
            "Window 8,192 from /v1/models max_model_len",
            "KV usage not shown: no /metrics."
        ]);
    });

    it("a draft over the window does not fit", () => {
        const full = { ...known, tokens: { ...known.tokens, usedTokens: 8_180 } } as RemoteMeasurement;
        expect(remoteDraftMeasurement(full)).toMatchObject({ remainingTokens: -12, fits: false });
    });
});
