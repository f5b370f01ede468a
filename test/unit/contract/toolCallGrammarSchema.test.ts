// The turn schema's check of a `toolCalls` grammar (run by the host and again by the engine): every
// field read, each refusal naming the field and its bound.
import { describe, expect, it } from "vitest";
import { readWith } from "../../../contract/rpc/fieldSchemas.js";
import { toolCallGrammarSchema } from "../../../contract/rpc/toolSchemas.js";

const syntax = { prefixes: ["<function="], paramsPrefix: ">", suffix: "</function>" };
const calls = [{ name: "get_time", schema: { type: "object", properties: { zone: { enum: ["UTC"] } } } }];

describe("toolCallGrammarSchema", () => {
    it("reads a well-formed grammar as it is", () => {
        const grammar = { kind: "toolCalls", syntax, calls, maxCalls: 1 };
        expect(readWith(toolCallGrammarSchema, grammar)).toEqual({ ok: true, value: grammar });
        const parallel = { ...syntax, parallel: { sectionPrefixes: [""], betweenCalls: "\n", sectionSuffix: "" } };
        expect(readWith(toolCallGrammarSchema, { kind: "toolCalls", syntax: parallel, calls, maxCalls: 8 })).toMatchObject({
            value: { syntax: parallel, maxCalls: 8 }
        });
    });

    it("refuses a bad field, naming it", () => {
        const refused = (grammar: Record<string, unknown>): string => {
            const read = readWith(toolCallGrammarSchema, { kind: "toolCalls", syntax, calls, maxCalls: 1, ...grammar });
            return read.ok ? "accepted" : read.reason;
        };
        expect(refused({ maxCalls: 9 })).toMatch(/maxCalls must be a whole number from 1 to 8; got 9/);
        expect(refused({ calls: [] })).toMatch(/calls must be a list of 1 to 128 calls/);
        expect(refused({ calls: [{ ...calls[0], name: "bad name" }] })).toMatch(/calls\[0\]\.name/);
        expect(refused({ syntax: { ...syntax, prefixes: [" "] } })).toMatch(/prefixes\[0\] is blank/);
        expect(refused({ syntax: { ...syntax, suffix: "x".repeat(257) } })).toMatch(/syntax\.suffix must be a string of at most 256/);
        expect(refused({ syntax: { ...syntax, prefixes: [] } })).toMatch(/syntax\.prefixes must be a list of 1 to 16/);
    });
});
