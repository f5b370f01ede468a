import { describe, expect, it } from "vitest";
import { meterReading } from "../../../../renderer/meter/meterReading.js";

const measure = (limit: number, usedTokens: number, draftTokens: number) => {
    const remainingTokens = limit - usedTokens - draftTokens;
    return { workspace: "w", limit, usedTokens, draftTokens, remainingTokens, fits: remainingTokens > 0 };
};

describe("meterReading", () => {
    it("lets a draft through when it and a whole answer fit", () => {
        const reading = meterReading(measure(4_096, 1_000, 200), 256);
        expect(reading).toEqual({
            limit: 4_096,
            usedTokens: 1_000,
            draftTokens: 200,
            leftTokens: 3_096,
            remainingTokens: 2_896,
            blockedBecause: undefined
        });
    });

    it("blocks a draft that does not fit, with its size, what is left and the window", () => {
        expect(meterReading(measure(4_096, 3_640, 1_234), 256).blockedBecause).toBe(
            "This message needs 1,234 tokens; 456 are left of 4,096. Shorten it or start a new workspace."
        );
    });

    it("blocks a draft that leaves less room than Max tokens, saying how far to lower it", () => {
        expect(meterReading(measure(512, 20, 30), 500).blockedBecause).toBe(
            "The answer may take up to 500 tokens (Max tokens), but only 462 are left after this message (window 512). Lower Max tokens to 462 or less, or shorten the message."
        );
        expect(meterReading(measure(512, 20, 30), 462).blockedBecause).toBeUndefined();
    });

    it("says when the conversation alone fills the window", () => {
        expect(meterReading(measure(512, 512, 3), 8).blockedBecause).toBe(
            "This workspace's conversation uses 512 of its 512 tokens; nothing is left for a message. Clear the chat or start a new workspace."
        );
    });
});
