import { describe, expect, it } from "vitest";
import { MAX_OPEN_GRAMMAR_ALTERNATIVES, measureGrammarAmbiguity } from "../../../contract/rpc/grammarAmbiguity.js";
import { readGrammarSchema } from "../../../contract/rpc/readGrammarSchema.js";
import { grammarSchemaProblem } from "../../../contract/rpc/turnSchemas.js";
import { ambiguousSchema } from "../../support/ambiguousSchema.js";

const numOpen = (schema: Record<string, unknown>) => measureGrammarAmbiguity(schema).numOpen;

describe("measureGrammarAmbiguity", () => {
    it("multiplies alike branches along their nesting: the issue's schema keeps 8^6 times 4 open and is refused at its second level", () => {
        // each innermost branch keeps about 4 stacks where its own text begins (a string's kinds of character, whitespace)
        expect([1, 2, 3, 4, 6].map((levels) => numOpen(ambiguousSchema(levels)))).toEqual([32, 256, 2_048, 16_384, 1_048_576]);
        const read = readGrammarSchema(ambiguousSchema());
        expect(read).toMatchObject({ ok: false, code: "ambiguous_schema", path: ".$defs.L2" });
        const reason = read.ok ? "" : read.reason;
        expect(reason).toContain("keeps about 256 parse stacks open at once (8 branches that start alike");
        expect(reason).toContain("1,048,576 in the whole schema");
        expect(reason).toContain(`the ${MAX_OPEN_GRAMMAR_ALTERNATIVES} Kvault allows`);
        expect(reason).toContain("make the alternatives start differently");
        expect(grammarSchemaProblem(ambiguousSchema())).toMatch(
            /^has a part too ambiguous for a grammar: \$defs.L2 keeps about 256 parse stacks/
        );
    });

    it("takes the limit itself and refuses one past it, wherever the alike branches sit", () => {
        const atLimit = ambiguousSchema(1, MAX_OPEN_GRAMMAR_ALTERNATIVES / 4);
        expect(numOpen(atLimit)).toBe(MAX_OPEN_GRAMMAR_ALTERNATIVES);
        expect(readGrammarSchema(atLimit).ok).toBe(true);
        const wide = ambiguousSchema(1, MAX_OPEN_GRAMMAR_ALTERNATIVES / 4 + 1);
        expect(readGrammarSchema(wide)).toMatchObject({ ok: false, path: ".$defs.L1" });
        const nested = { type: "object", properties: { list: ambiguousSchema(4) } };
        expect(readGrammarSchema(nested)).toMatchObject({ ok: false, path: ".properties.list.$defs.L2" });
    });

    it("counts branches that start differently as one each until they part, then about 4 for the one that goes on: nullable fields, first properties, const tags, type lists", () => {
        expect(numOpen({ anyOf: [{ type: "string" }, { type: "null" }] })).toBe(4);
        const tagged = {
            oneOf: ["circle", "square", "triangle"].map((kind) => ({
                type: "object",
                properties: { kind: { const: kind }, size: { anyOf: [{ type: "number" }, { type: "null" }] } }
            }))
        };
        // three objects all start `{"kind":"`, one stack each; then each is alone, its nullable size keeping 4
        expect(numOpen(tagged)).toBe(4);
        const nestedTagged = {
            type: "array",
            items: { oneOf: [tagged, { type: "object", properties: { group: { type: "array", items: tagged } } }] }
        };
        expect(numOpen(nestedTagged)).toBe(4);
        // number and integer both start with a digit, where each keeps about 4
        expect(numOpen({ type: ["number", "integer", "null"] })).toBe(8);
    });

    it("counts an enum's values (and a union's consts) as the engine's trie of them keeps them: one per distinct next character", () => {
        // "country-0" … "country-249": after `"country-` ten digits go on, after `"country-1` the closing quote and ten digits
        expect(numOpen({ enum: Array.from({ length: 250 }, (_, index) => `country-${index}`) })).toBe(11);
        const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        const codes = [...letters].flatMap((first) =>
            [...letters].flatMap((second) => [..."ABCDEF"].map((third) => first + second + third))
        );
        expect(codes.length).toBe(4_056);
        expect(readGrammarSchema({ type: "object", properties: { currency: { enum: codes } } }).ok).toBe(true);
        expect(numOpen({ enum: codes })).toBe(26);
        const timezones = ["Africa/Abidjan", "Africa/Accra", "America/New_York", "America/Nome", "Asia/Tokyo", "Europe/Paris", "UTC"];
        expect(numOpen({ enum: timezones })).toBe(3);
        expect(numOpen({ oneOf: codes.slice(0, 6).map((code) => ({ const: code })) })).toBe(6);
        // literals beside other alternatives: the string type starts a stack of its own
        expect(numOpen({ anyOf: [{ enum: ["a", "b"] }, { type: "string" }] })).toBe(2 + 4);
        // values that really part only after a shared start are still counted there: 60 of them, past the limit
        const alike = Array.from({ length: 60 }, (_, index) => `shared-start-${String.fromCodePoint(0x41 + index)}`);
        expect(numOpen({ enum: alike })).toBe(60);
        expect(readGrammarSchema({ enum: alike })).toMatchObject({ ok: false, code: "ambiguous_schema" });
    });

    it("serves OpenAI's structured-output examples and recursive unions whose branches part", () => {
        const mathReasoning = {
            type: "object",
            properties: {
                steps: {
                    type: "array",
                    items: { type: "object", properties: { explanation: { type: "string" }, output: { type: "string" } } }
                },
                final_answer: { type: "string" }
            },
            required: ["steps", "final_answer"],
            additionalProperties: false
        };
        const ui = {
            $defs: {
                ui: {
                    type: "object",
                    properties: {
                        type: { enum: ["div", "button", "header", "section", "field", "form"] },
                        label: { type: "string" },
                        children: { type: "array", items: { $ref: "#/$defs/ui" } },
                        attributes: {
                            type: "array",
                            items: { type: "object", properties: { name: { type: "string" }, value: { type: "string" } } }
                        }
                    }
                }
            },
            $ref: "#/$defs/ui"
        };
        const linkedList = {
            $defs: {
                node: {
                    type: "object",
                    properties: { value: { type: "number" }, next: { anyOf: [{ $ref: "#/$defs/node" }, { type: "null" }] } }
                }
            },
            $ref: "#/$defs/node"
        };
        const filter = {
            $defs: {
                filter: {
                    oneOf: [
                        { type: "object", properties: { and: { type: "array", items: { $ref: "#/$defs/filter" } } } },
                        { type: "object", properties: { or: { type: "array", items: { $ref: "#/$defs/filter" } } } },
                        { type: "object", properties: { field: { type: "string" }, equals: { type: ["string", "number"] } } }
                    ]
                }
            },
            $ref: "#/$defs/filter"
        };
        for (const schema of [mathReasoning, ui, linkedList, filter]) {
            expect(readGrammarSchema(schema).ok).toBe(true);
        }
        expect([mathReasoning, ui, linkedList, filter].map(numOpen)).toEqual([1, 5, 4, 4]);
    });

    it("refuses a recursion through alike branches, which has no bound, naming the definition", () => {
        const nest = {
            $defs: {
                tree: {
                    anyOf: [
                        { type: "array", items: { $ref: "#/$defs/tree" } },
                        { type: "array", items: { type: "string" } }
                    ]
                }
            },
            $ref: "#/$defs/tree"
        };
        const ambiguity = measureGrammarAmbiguity(nest);
        expect(ambiguity.unboundedAt).toBe(".$defs.tree");
        const read = readGrammarSchema(nest);
        expect(read).toMatchObject({ ok: false, code: "ambiguous_schema", path: ".$defs.tree" });
        expect(read.ok ? "" : read.reason).toContain("without bound");
        // a cycle through thousands of definitions (the size limit's worth) is walked a bounded number of times, without a deep stack
        const numDefinitions = 3_000;
        const ring = Object.fromEntries(
            Array.from({ length: numDefinitions }, (_, index) => [
                `d${index}`,
                { anyOf: [{ type: "array", items: { $ref: `#/$defs/d${(index + 1) % numDefinitions}` } }, { type: "array" }] }
            ])
        );
        // refused as unbounded, or at the first count past the limit, which a few of its levels reach
        const ringAmbiguity = measureGrammarAmbiguity({ $defs: ring, $ref: "#/$defs/d0" });
        expect(ringAmbiguity.unboundedAt ?? ringAmbiguity.firstOver?.path).toMatch(/^\.\$defs\.d\d+$/);
        const chain = Object.fromEntries(
            Array.from({ length: numDefinitions }, (_, index) => [
                `d${index}`,
                index === numDefinitions - 1 ? { type: "string" } : { type: "array", items: { $ref: `#/$defs/d${index + 1}` } }
            ])
        );
        expect(measureGrammarAmbiguity({ $defs: chain, $ref: "#/$defs/d0" })).toEqual({ numOpen: 1 });
        const selfAlternative = { $defs: { loop: { anyOf: [{ $ref: "#/$defs/loop" }, { type: "string" }] } }, $ref: "#/$defs/loop" };
        expect(readGrammarSchema(selfAlternative)).toMatchObject({ ok: false, code: "ambiguous_schema" });
    });
});
