import { describe, expect, it } from "vitest";
import { readGrammarSchema } from "../../../contract/rpc/readGrammarSchema.js";
import { grammarSchemaProblem, jsonObjectProblem } from "../../../contract/rpc/turnSchemas.js";

describe("readGrammarSchema", () => {
    it("takes the forms node-llama-cpp enforces, drops annotations and serves anyOf as oneOf", () => {
        const read = readGrammarSchema({
            $schema: "https://json-schema.org/draft/2020-12/schema",
            title: "Shirt",
            type: "object",
            properties: {
                size: { anyOf: [{ enum: ["s", "m"] }, { type: "null" }], default: null },
                when: { type: "string", format: "date" },
                tags: { type: "array", items: { $ref: "#/$defs/tag" }, maxItems: 3 }
            },
            required: ["size"],
            additionalProperties: false,
            $defs: { tag: { type: "string", maxLength: 8, description: "a tag" } }
        });
        expect(read).toEqual({
            ok: true,
            schema: {
                $defs: { tag: { type: "string", maxLength: 8, description: "a tag" } },
                type: "object",
                properties: {
                    size: { oneOf: [{ enum: ["s", "m"] }, { type: "null" }] },
                    when: { type: "string", format: "date" },
                    tags: { type: "array", items: { $ref: "#/$defs/tag" }, maxItems: 3 }
                }
            }
        });
    });

    it("refuses by path what the grammar cannot enforce", () => {
        const refusal = (schema: Record<string, unknown>) => {
            const read = readGrammarSchema(schema);
            return read.ok ? "accepted" : read.path;
        };
        expect(refusal({ type: "object", properties: { age: { type: "integer", minimum: 0 } } })).toBe(".properties.age.minimum");
        expect(refusal({ type: "string", pattern: "a+" })).toBe(".pattern");
        expect(refusal({ allOf: [{ type: "string" }] })).toBe("");
        expect(refusal({ type: "string", format: "email" })).toBe(".format");
        expect(refusal({ $ref: "#/$defs/missing" })).toBe(".$ref");
        expect(refusal({ type: "object", properties: {}, required: ["x"] })).toBe(".required");
        expect(refusal({ type: "array", items: true })).toBe(".items");
        expect(refusal({ type: ["string", "object"] })).toBe(".type");
        expect(refusal({ type: "string", enum: ["a"] })).toBe("");
    });

    it("says the part in the turn's message, and refuses what is not JSON", () => {
        expect(grammarSchemaProblem({ type: "number", multipleOf: 2 })).toContain("multipleOf");
        expect(grammarSchemaProblem({ type: "number" })).toBeUndefined();
        expect(jsonObjectProblem([1])).toContain("JSON object");
        expect(jsonObjectProblem({ a: Number.NaN })).toContain("NaN");
        const cycle: Record<string, unknown> = {};
        cycle.self = cycle;
        expect(jsonObjectProblem(cycle)).toContain("levels deep");
    });
});
