import { describe, expect, it } from "vitest";
import { composerState } from "../../../../renderer/chat/composerState.js";
import type { MeterReading } from "../../../../renderer/meter/meterReading.js";

const open = { kind: "open" } as const;
const fits: MeterReading = { limit: 512, usedTokens: 10, draftTokens: 5, leftTokens: 502, remainingTokens: 497, blockedBecause: undefined };
const tooLong: MeterReading = {
    ...fits,
    draftTokens: 900,
    remainingTokens: -398,
    blockedBecause: "This message needs 900 tokens; 502 are left of 512. Shorten it or start a new workspace."
};

describe("composerState", () => {
    it("sends a fitting draft while connected and idle", () => {
        expect(composerState({ draft: "hi", connection: open, running: false, reading: fits, fresh: true })).toEqual({
            canSend: true,
            reason: undefined
        });
    });

    it("says why it cannot send: not connected, or the draft does not fit", () => {
        expect(
            composerState({ draft: "hi", connection: { kind: "reconnecting", attempt: 2 }, running: false, reading: fits, fresh: true })
                .reason
        ).toMatch(/reconnects by itself/);
        expect(composerState({ draft: "hi", connection: open, running: false, reading: tooLong, fresh: true })).toEqual({
            canSend: false,
            reason: tooLong.blockedBecause
        });
    });

    it("sends nothing while empty or while the workspace answers, without a message", () => {
        expect(composerState({ draft: "  ", connection: open, running: false, reading: fits, fresh: true })).toEqual({
            canSend: false,
            reason: undefined
        });
        expect(composerState({ draft: "hi", connection: open, running: true, reading: fits, fresh: true })).toEqual({
            canSend: false,
            reason: undefined
        });
    });

    it("keeps blocking on a stale reading that blocked; lets the engine judge on a stale one that fit or none at all", () => {
        expect(composerState({ draft: "hi!", connection: open, running: false, reading: tooLong, fresh: false })).toEqual({
            canSend: false,
            reason: `${tooLong.blockedBecause} (Measuring the new text…)`
        });
        expect(composerState({ draft: "hi!", connection: open, running: false, reading: fits, fresh: false }).canSend).toBe(true);
        expect(composerState({ draft: "hi!", connection: open, running: false, reading: undefined, fresh: false }).canSend).toBe(true);
    });
});
