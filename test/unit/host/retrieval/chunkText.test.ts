import { describe, expect, it } from "vitest";
import { chunkText } from "../../../../host/retrieval/chunkText.js";

describe("chunkText: a file's text in chunks for its workspace's retrieval index", () => {
    it("keeps every word whole and in order, each chunk within the limit", () => {
        const text = Array.from({ length: 120 }, (_, index) => `word${index}`).join(" ");
        const chunks = chunkText(text, 50);
        expect(chunks.every((chunk) => chunk.length <= 50)).toBe(true);
        expect(chunks.join(" ").split(" ")).toEqual(text.split(" "));
    });

    it("cuts a word longer than a chunk at the limit, and leaves no empty chunk", () => {
        expect(chunkText(`${"x".repeat(25)}\n\n   \n`, 10)).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
        expect(chunkText("", 10)).toEqual([]);
    });
});
