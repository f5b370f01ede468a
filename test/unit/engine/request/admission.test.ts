import { describe, expect, it } from "vitest";
import { admit, requestLimit } from "../../../../engine/request/admission.js";
import { ContextLengthExceededError, InvalidRequestError } from "../../../../engine/request/requestErrors.js";
import { isTerminal, type RequestStatus } from "../../../../engine/request/RequestStatus.js";

describe("requestLimit", () => {
    it("is the configured window when every measured capacity is larger", () => {
        expect(requestLimit({ window: 4096, prefill: 8192, decode: 4096, pool: 65_536 })).toEqual({ limit: 4096, boundBy: "window" });
    });

    it("is the smallest measured capacity when the window is above it, and names it", () => {
        // The 2026 incident's numbers: a 681,280-token prefill pool behind a 1,048,576-token window.
        expect(requestLimit({ window: 1_048_576, prefill: 2_000_000, decode: 1_048_576, pool: 681_280 })).toEqual({
            limit: 681_280,
            boundBy: "pool"
        });
        expect(requestLimit({ window: 512, prefill: 256, decode: 512, pool: 1024 })).toEqual({ limit: 256, boundBy: "prefill" });
        expect(requestLimit({ window: 512, prefill: 512, decode: 300, pool: 1024 })).toEqual({ limit: 300, boundBy: "decode" });
    });
});

describe("admit", () => {
    const limit = { limit: 256, boundBy: "prefill" } as const;

    it("admits a request that fits exactly", () => {
        expect(admit(248, 8, limit)).toEqual({ ok: true });
    });

    it("rejects one token more with the numbers and the bound", () => {
        const admission = admit(249, 8, limit);
        expect(admission.ok).toBe(false);
        const error = (admission as { error: ContextLengthExceededError }).error;
        expect(error).toBeInstanceOf(ContextLengthExceededError);
        expect(error.code).toBe("context_length_exceeded");
        expect(error.message).toBe(
            "This request needs 257 tokens (249 of prompt + 8 to generate); the limit is 256, set by the measured prefill capacity. " +
                "Shorten the prompt, ask for fewer tokens, or start a new chat."
        );
    });

    it.each([
        [0, 8],
        [10, 0],
        [10, -1],
        [10, 1.5],
        [Number.NaN, 8]
    ])("rejects prompt %s with max_tokens %s as invalid", (numPrompt, maxTokens) => {
        const admission = admit(numPrompt, maxTokens, limit);
        expect(admission.ok).toBe(false);
        expect((admission as { error: Error }).error).toBeInstanceOf(InvalidRequestError);
    });
});

describe("isTerminal", () => {
    it("is true exactly for finished, rejected, cancelled and failed", () => {
        const statuses: RequestStatus[] = [
            { kind: "admitted" },
            { kind: "prefilling" },
            { kind: "transferring" },
            { kind: "decoding" },
            { kind: "finished", reason: "stop" },
            { kind: "rejected", error: new Error("x") },
            { kind: "cancelled" },
            { kind: "failed", error: new Error("y") }
        ];
        expect(statuses.filter(isTerminal).map((status) => status.kind)).toEqual(["finished", "rejected", "cancelled", "failed"]);
    });
});
