// An enum's alternation of whole literals becomes one trie of their characters, so llama.cpp keeps
// one stack per distinct next character instead of one per value; the factored grammar is sampled
// under in test/model/host/ambiguousSchemaStreams.test.ts.
import { describe, expect, it } from "vitest";
import { factorLiteralAlternatives, literalTrie } from "../../../../engine/runtime/factorLiteralAlternatives.js";

describe("factorLiteralAlternatives", () => {
    it("writes an enum's values as a trie: shared starts once, a fork per distinct next character", () => {
        // node-llama-cpp's grammar for {code: {enum: ["USD", "USN", "EUR"]}}
        const grammar = [
            'root ::= "{" ws "\\"code\\"" ":" [ ]? rule0 ws "}" "\\n\\n\\n\\n" [\\n]*',
            'val0 ::= "\\"USD\\""',
            'val1 ::= "\\"USN\\""',
            'val2 ::= "\\"EUR\\""',
            "rule0 ::= ( val0 | val1 | val2 )",
            "ws ::= [ ]?"
        ].join("\n");
        const factored = factorLiteralAlternatives(grammar).split("\n");
        expect(factored[4]).toBe('rule0 ::= ( "\\"" ( "US" ( "D\\"" | "N\\"" ) | "EUR\\"" ) )');
        expect(factored.filter((_, index) => index !== 4)).toEqual(grammar.split("\n").filter((_, index) => index !== 4));
    });

    it("keeps a union's other alternatives beside the trie, and a value that is another's start optional", () => {
        const grammar = [
            'val0 ::= "\\"p\\""',
            'val1 ::= "\\"q\\""',
            'rule1 ::= ( val0 | val1 | "3" | "31" | null-rule | number-rule )'
        ].join("\n");
        expect(factorLiteralAlternatives(grammar).split("\n")[2]).toBe(
            'rule1 ::= ( "\\"" ( "p\\"" | "q\\"" ) | "3" ( "1" )? | null-rule | number-rule )'
        );
        expect(literalTrie(['a\\"b\n', "a"])).toEqual([String.raw`"a" ( "\\\"b\x0a" )?`]);
    });

    it("leaves alone what it does not read: one literal, groups and classes among the alternatives, a literal holding ' | '", () => {
        const grammar = [
            'val0 ::= "\\"a | b\\""',
            'val1 ::= "\\"c\\""',
            "rule0 ::= ( val0 | val1 )",
            'rule1 ::= ( val1 | [0-9] | "x" )',
            'rule2 ::= ( val1 | ( "y" "z" ) )',
            "rule3 ::= ( val1 | null-rule )"
        ].join("\n");
        const factored = factorLiteralAlternatives(grammar).split("\n");
        expect(factored[2]).toBe('rule0 ::= ( "\\"" ( "a | b\\"" | "c\\"" ) )');
        expect(factored.slice(3)).toEqual(grammar.split("\n").slice(3));
    });
});
