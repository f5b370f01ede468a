import { describe, expect, it } from "vitest";
import { buildSyntheticVocabulary, specialTokens, TokenType, WORD_BOUNDARY } from "../../../../synthetic/model/syntheticVocabulary.js";

describe("buildSyntheticVocabulary", () => {
    it.each([512, 32_000, 128_256])("fills exactly %i unique pieces", (size) => {
        const vocabulary = buildSyntheticVocabulary(size);
        expect(vocabulary.tokens).toHaveLength(size);
        expect(new Set(vocabulary.tokens).size).toBe(size);
        expect(vocabulary.scores).toHaveLength(size);
        expect(vocabulary.tokenTypes).toHaveLength(size);
    });

    it("has the control tokens at fixed ids and the 256 byte-fallback tokens", () => {
        const { tokens, tokenTypes } = buildSyntheticVocabulary(512);
        for (const special of Object.values(specialTokens)) {
            expect(tokens[special.id]).toBe(special.text);
        }
        expect(tokenTypes[specialTokens.unknown.id]).toBe(TokenType.Unknown);
        expect(tokenTypes[specialTokens.imEnd.id]).toBe(TokenType.Control);
        const byteTokens = tokens.filter((_, id) => tokenTypes[id] === TokenType.Byte);
        expect(byteTokens).toHaveLength(256);
        expect(byteTokens[0x0a]).toBe("<0x0A>");
        expect(tokens).toContain(WORD_BOUNDARY);
    });

    it("builds every multi-character piece from a shorter piece plus one letter, so SPM merges reach it", () => {
        const { tokens, tokenTypes } = buildSyntheticVocabulary(32_000);
        const known = new Set(tokens);
        for (let id = 0; id < tokens.length; id++) {
            const piece = tokens[id]!;
            if (tokenTypes[id] !== TokenType.Normal || piece.length < 2) {
                continue;
            }
            expect(known.has(piece.slice(0, -1)), piece).toBe(true);
        }
    });

    it("refuses a size below the fixed pieces", () => {
        expect(() => buildSyntheticVocabulary(100)).toThrow(/at least 356 tokens; 100/);
    });
});
