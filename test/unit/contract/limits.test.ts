import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { oversizeMessage, rpcLimits, splitUtf8, utf8ByteLength } from "../../../contract/limits.js";
import { workspaceLimits } from "../../../contract/workspaces.js";

const encoder = new TextEncoder();
/** Any UTF-16 text, lone surrogates included (a renderer can hold them; TextEncoder writes U+FFFD, 3 bytes, for each). */
const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), maxLength: 200 });

describe("utf8ByteLength", () => {
    it("counts what TextEncoder writes, without encoding", () => {
        fc.assert(
            fc.property(fc.oneof(anyText, fc.string({ unit: "binary" })), (text) => utf8ByteLength(text) === encoder.encode(text).length)
        );
        expect(utf8ByteLength("漢".repeat(3_000_000))).toBe(9_000_000);
    });
});

describe("splitUtf8", () => {
    it("cuts a text into parts within the byte limit that join to the text, never inside a surrogate pair", () => {
        fc.assert(
            fc.property(fc.oneof(anyText, fc.string({ unit: "binary" })), fc.integer({ min: 4, max: 40 }), (text, maxBytes) => {
                const parts = splitUtf8(text, maxBytes);
                expect(parts.join("")).toBe(text);
                for (const part of parts) {
                    expect(utf8ByteLength(part)).toBeLessThanOrEqual(maxBytes);
                }
                expect(parts.map((part) => encoder.encode(part).length).reduce((sum, size) => sum + size, 0)).toBe(
                    encoder.encode(text).length
                );
            })
        );
        expect(splitUtf8("", 4)).toEqual([""]);
        expect(() => splitUtf8("abc", 3)).toThrow(RangeError);
    });

    it("fits the largest document the store imports into as many parts as importWorkspaces takes", () => {
        const numParts = Math.ceil((workspaceLimits.maxImportChars * 3) / (rpcLimits.maxImportPartBytes - 3));
        expect(numParts).toBeLessThanOrEqual(12);
    });
});

describe("the limits agree", () => {
    it("a whole conversation at its limit, with room for JSON around it, fits one RPC message", () => {
        expect(rpcLimits.maxConversationBytes).toBeLessThan(rpcLimits.maxMessageBytes);
        expect(rpcLimits.maxMessageBytes - rpcLimits.maxConversationBytes).toBeGreaterThanOrEqual(4 * 1024 * 1024);
        // The UI reaches 9 MB legitimately: 3,000,000 CJK characters in one message, under the store's limit in characters.
        expect(3_000_000).toBeLessThanOrEqual(workspaceLimits.maxMessageChars);
        expect(oversizeMessage(9_000_100)).toBeUndefined();
        expect(oversizeMessage(rpcLimits.maxMessageBytes + 1)).toMatch(
            /^This RPC message is 33,554,433 bytes \(UTF-8\); Kvault carries at most 33,554,432 bytes in one/
        );
    });
});
