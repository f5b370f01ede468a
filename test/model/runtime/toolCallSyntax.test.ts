// The parser of templateToolCalls.ts over the call syntaxes of the wrappers node-llama-cpp ships:
// each wrapper renders a call (its own generateFunctionCall, and its parallel section where it has
// one), and the syntax toolCallSyntax.ts reads from the same wrapper parses it back. Twice: with
// the special tokens' text kept, and with it dropped, as the engine's answer text drops it.
import {
    type ChatWrapper,
    FunctionaryChatWrapper,
    GeneralChatWrapper,
    Llama3ChatWrapper,
    Llama3_1ChatWrapper,
    LlamaText,
    QwenChatWrapper
} from "node-llama-cpp";
import { describe, expect, test } from "vitest";
import { toolCallSyntaxOf } from "../../../engine/runtime/toolCallSyntax.js";
import { mayBeTemplateCall, parseTemplateCalls } from "../../../host/http/templateToolCalls.js";

const wrappers: readonly [string, ChatWrapper][] = [
    ["Llama 3.1", new Llama3_1ChatWrapper()],
    ["Llama 3", new Llama3ChatWrapper()],
    ["Qwen", new QwenChatWrapper()],
    ["Functionary", new FunctionaryChatWrapper()],
    ["General", new GeneralChatWrapper()]
];

const keepSpecial = (piece: string | LlamaText): string => LlamaText(piece).toString();
/** As the engine's answer text shows a piece where every special-tokens text is a special token of the vocabulary (Qwen's <tool_call>). */
const dropSpecial = (piece: string | LlamaText): string =>
    LlamaText(piece)
        .values.map((value) => (typeof value === "string" ? value : ""))
        .join("");

const cases: readonly [string, ChatWrapper, (piece: string | LlamaText) => string][] = [
    ...wrappers.map(([name, wrapper]): [string, ChatWrapper, (piece: string | LlamaText) => string] => [name, wrapper, keepSpecial]),
    ["Qwen, special tokens dropped", new QwenChatWrapper(), dropSpecial]
];

const weather = { city: "Paris", days: 3, units: { celsius: true }, tags: ["a}b", 'quote"'] };

describe.each(cases)("%s", (_name, wrapper, show) => {
    const syntax = toolCallSyntaxOf(wrapper, show)!;

    test("the wrapper's own rendering of a call parses back to its name and arguments", () => {
        expect(syntax).toBeDefined();
        const text = show(wrapper.generateFunctionCall("get_weather", weather));
        expect(parseTemplateCalls(text, syntax)).toEqual([{ name: "get_weather", arguments: weather }]);
        expect(mayBeTemplateCall(text, syntax)).toBe(true);
    });

    test("a call cut at its suffix (the engine stops at the end-of-turn token) still parses", () => {
        const text = show(
            LlamaText([syntax.prefixes[0]!, "lookup", syntax.paramsPrefix.replaceAll("{{functionName}}", "lookup"), '{"q": 1}'])
        );
        expect(parseTemplateCalls(text, syntax)).toEqual([{ name: "lookup", arguments: { q: 1 } }]);
    });

    test("every beginning of the prefix is held back while streamed; plain text is not", () => {
        const prefix = syntax.prefixes[0]!.trim();
        for (let length = 1; length <= prefix.length; length++) {
            expect(mayBeTemplateCall(prefix.slice(0, length), syntax), prefix.slice(0, length)).toBe(true);
        }
        expect(mayBeTemplateCall("The weather in Paris is mild.", syntax)).toBe(false);
        expect(parseTemplateCalls("The weather in Paris is mild.", syntax)).toBeUndefined();
    });

    test("a call followed by text is not a call", () => {
        const text = show(wrapper.generateFunctionCall("get_weather", weather)) + " and then some prose that is no call";
        expect(parseTemplateCalls(text, syntax)).toBeUndefined();
    });

    const parallel = wrapper.settings.functions.parallelism?.call;
    if (parallel !== undefined) {
        test("two calls in the wrapper's parallel section parse back in order", () => {
            const text = show(
                LlamaText([
                    parallel.sectionPrefix,
                    wrapper.generateFunctionCall("get_weather", weather),
                    parallel.betweenCalls ?? "",
                    wrapper.generateFunctionCall("get_time", { zone: "UTC" }),
                    parallel.sectionSuffix ?? ""
                ])
            );
            expect(parseTemplateCalls(text, syntax)).toEqual([
                { name: "get_weather", arguments: weather },
                { name: "get_time", arguments: { zone: "UTC" } }
            ]);
        });
    }
});
