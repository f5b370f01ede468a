import { describe, expect, it } from "vitest";
import { InFlightLimit } from "../../../../host/http/InFlightLimit.js";

// The shares are pure arithmetic over who holds places; test/cli/apiKeyIsolation.test.ts shows them through the server.
describe("InFlightLimit", () => {
    it("lets the default key alone take every place, then answers queue_full", () => {
        const limit = new InFlightLimit(4);
        const releases = Array.from({ length: 4 }, () => limit.admit(undefined));
        expect(() => limit.admit(undefined)).toThrow(expect.objectContaining({ status: 429, code: "queue_full" }));
        releases[0]!();
        releases[0]!(); // a second release gives nothing back twice
        expect(limit.count).toBe(3);
        limit.admit(undefined);
    });

    it("keeps room for another key: a lone key holds half, two busy of three hold a third each", () => {
        const limit = new InFlightLimit(64, () => 3);
        const alice = "alice~0123456789abcdef";
        const bob = "bob~0123456789abcdef";
        Array.from({ length: 32 }, () => limit.admit(alice));
        expect(() => limit.admit(alice)).toThrow(
            expect.objectContaining({
                status: 429,
                code: "key_share_full",
                message: expect.stringMatching(
                    /^The key "alice" has 32 requests running or queued, its share of this server's 64 places, which are shared among 2 keys/
                )
            })
        );
        expect(limit.shareOf(bob)).toBe(21);
        Array.from({ length: 21 }, () => limit.admit(bob));
        expect(() => limit.admit(bob)).toThrow(expect.objectContaining({ code: "key_share_full" }));
        // The third key still gets in, up to the places that are left.
        const releases = Array.from({ length: 11 }, () => limit.admit(undefined));
        expect(() => limit.admit(undefined)).toThrow(expect.objectContaining({ code: "queue_full" }));
        releases.forEach((release) => release());
        expect(limit.count).toBe(53);
    });
});
