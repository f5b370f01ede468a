// The pure parts of reading a call in a template's syntax (templateToolCalls.ts) and serving it
// (toolCallAnswers.ts), over syntaxes written out by hand as the engine reports them; the syntaxes
// read from node-llama-cpp's own wrappers are tested in test/model/runtime/toolCallSyntax.test.ts.
import { describe, expect, it } from "vitest";
import type { ToolCallSyntax } from "../../../../contract/engineProtocol.js";
import type { ToolUse } from "../../../../host/http/readTools.js";
import { mayBeTemplateCall, parseTemplateCalls } from "../../../../host/http/templateToolCalls.js";
import { mayBeToolCall, readToolCallAnswer, templateCallGrammar } from "../../../../host/http/toolCallAnswers.js";

const llama31: ToolCallSyntax = { prefixes: ["<function="], paramsPrefix: ">", suffix: "</function>" };
const qwen: ToolCallSyntax = {
    prefixes: ['<tool_call>\n{"name": "'],
    paramsPrefix: '", "arguments": ',
    suffix: "}\n</tool_call>",
    parallel: { sectionPrefixes: [""], betweenCalls: "\n", sectionSuffix: "\n" }
};
const use: ToolUse = { tools: [{ name: "get_weather" }, { name: "get_time" }], choice: "auto", parallel: true };

describe("calls in a template's syntax", () => {
    it("reads a call, with or without its suffix (cut by the end-of-turn token), and arguments holding brackets in strings", () => {
        expect(parseTemplateCalls('<function=get_weather>{"city": "a}b[", "n": [1, {"x": 2}]}</function>', llama31)).toEqual([
            { name: "get_weather", arguments: { city: "a}b[", n: [1, { x: 2 }] } }
        ]);
        expect(parseTemplateCalls('  <function=get_time>{"zone": "UTC"}</func', llama31)).toEqual([
            { name: "get_time", arguments: { zone: "UTC" } }
        ]);
        expect(parseTemplateCalls("<function=get_time></function>", llama31)).toEqual([{ name: "get_time", arguments: {} }]);
    });

    it("reads parallel calls between the section's pieces, and refuses anything around them", () => {
        const two =
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
        expect(parseTemplateCalls(two, qwen)).toEqual([
            { name: "get_weather", arguments: { city: "Oslo" } },
            { name: "get_time", arguments: {} }
        ]);
        expect(parseTemplateCalls(`${two}\nand some prose`, qwen)).toBeUndefined();
        expect(parseTemplateCalls(`Sure: ${two}`, qwen)).toBeUndefined();
        expect(
            parseTemplateCalls('<function=get_time>{"zone": "UTC"}</function><function=get_time>{}</function>', llama31)
        ).toBeUndefined();
        expect(parseTemplateCalls('<function=get_time>{"zone": </function>', llama31)).toBeUndefined();
        expect(parseTemplateCalls("<function=get_time>[1]</function>", llama31)).toBeUndefined();
    });

    it("holds streamed text back while it may still become a call, and only then", () => {
        for (const text of ["", " ", "<", "<func", "<function=get_", '<tool_call>\n{"na']) {
            expect(mayBeTemplateCall(text, text.startsWith("<tool") ? qwen : llama31), JSON.stringify(text)).toBe(true);
        }
        expect(mayBeTemplateCall("<b>bold</b>", llama31)).toBe(false);
        expect(mayBeTemplateCall("Hello", qwen)).toBe(false);
        expect(mayBeToolCall("Hello", use, llama31)).toBe(false);
        expect(mayBeToolCall("<functi", use, llama31)).toBe(true);
        expect(mayBeToolCall("<functi", use)).toBe(false);
        expect(mayBeToolCall("Hello", { ...use, choice: "required" }, llama31)).toBe(true);
    });
});

describe("serving calls", () => {
    it("reads the template's syntax first and the JSON shape as the fallback, tools by name only", () => {
        const template = readToolCallAnswer('<function=get_weather>{"city": "Oslo"}</function>', use, "stop", llama31);
        expect(template?.map((call) => call.function)).toEqual([{ name: "get_weather", arguments: '{"city":"Oslo"}' }]);
        const json = readToolCallAnswer('[{"name": "get_time", "arguments": {"zone": "UTC"}}]', use, "stop", llama31);
        expect(json?.map((call) => call.function)).toEqual([{ name: "get_time", arguments: '{"zone":"UTC"}' }]);
        expect(readToolCallAnswer("<function=nope>{}</function>", use, "stop", llama31)).toBeUndefined();
        expect(readToolCallAnswer('<function=get_time>{"zone": "UTC"}</function>', use, "length", llama31)).toBeUndefined();
        const two =
            '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
        expect(readToolCallAnswer(two, use, "stop", qwen)).toHaveLength(2);
        expect(readToolCallAnswer(two, { ...use, parallel: false }, "stop", qwen)).toBeUndefined();
    });

    it("holds a required or named call to the template's syntax, parallel only where the template writes it", () => {
        const required: ToolUse = { ...use, choice: "required", grammar: { kind: "json" } };
        expect(templateCallGrammar(use, qwen)).toBeUndefined();
        expect(templateCallGrammar(required, undefined)).toBeUndefined();
        expect(templateCallGrammar(required, qwen)).toMatchObject({
            kind: "toolCalls",
            maxCalls: 2,
            calls: [{ name: "get_weather" }, { name: "get_time" }]
        });
        expect(templateCallGrammar(required, llama31)).toMatchObject({ kind: "toolCalls", maxCalls: 1 });
        expect(templateCallGrammar({ ...required, choice: { name: "get_time" } }, qwen)).toMatchObject({
            maxCalls: 1,
            calls: [{ name: "get_time", schema: { type: "object", properties: {} } }]
        });
    });
});
