// The tool fields of a chat turn (contract/engineProtocol.ts): the tools the chat template
// describes, the calls an assistant message made with their results, and a grammar that holds an
// answer to tool calls in the template's own syntax. Part of the turn's one schema (turnSchemas.ts).
import * as v from "valibot";
import type { GrammarSpec, JsonObject, ToolCall, ToolCallSyntax, ToolDefinition } from "../engineProtocol.js";
import { turnLimits } from "../limits.js";
import { describeValue, integer, isRecord, list, record } from "./fieldSchemas.js";
import { grammarSchemaProblem } from "./grammarSchemaProblem.js";

/** At most this many tools a turn, and calls a message: far above what a template renders usefully. */
export const MAX_TOOLS = 128;
/** At most this many calls a `toolCalls` grammar allows in one answer. */
export const MAX_GRAMMAR_CALLS = 8;
/** Characters of one piece of a tool call's syntax, and pieces of one list. */
const MAX_SYNTAX_CHARS = 256;
const MAX_SYNTAX_PIECES = 16;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A name in OpenAI's alphabet for tools. */
const toolName = v.custom<string>(
    (value) => typeof value === "string" && TOOL_NAME.test(value),
    () => "must be 1 to 64 letters, digits, _, . or -."
);

/** A tool's text (a description, a call's arguments or result): at most a message's characters. */
const toolText = v.custom<string>(
    (value) => typeof value === "string" && value.length <= turnLimits.maxMessageChars,
    () => `must be a string of at most ${turnLimits.maxMessageChars.toLocaleString("en-US")} characters.`
);

/** A JSON schema a grammar enforces in full (grammarSchemaProblem). */
export const enforceableSchema = v.custom<JsonObject>(
    (value) => grammarSchemaProblem(value) === undefined,
    (issue) => grammarSchemaProblem(issue.input) ?? ""
);

const toolSchema = record({
    name: toolName,
    description: v.optional(toolText),
    parameters: v.optional(enforceableSchema)
});

/** `tools`: a list of {name, description?, parameters?}, each name its own. */
export const toolsSchema = v.pipe(
    list(toolSchema, { maxItems: MAX_TOOLS, what: "tools" }),
    v.check(
        (tools) => new Set(tools.map((tool) => tool.name)).size === tools.length,
        (issue) => `name ${describeValue(firstRepeatedName(issue.input as readonly ToolDefinition[]))} twice; each tool needs its own.`
    )
) as v.GenericSchema<unknown, ToolDefinition[]>;

function firstRepeatedName(tools: readonly ToolDefinition[]): string | undefined {
    return tools.find((tool, index) => tools.findIndex((other) => other.name === tool.name) !== index)?.name;
}

const toolCallSchema = record({
    id: toolText,
    name: toolName,
    arguments: toolText,
    result: v.optional(toolText)
});

/** An assistant message's `toolCalls`: 1 to MAX_TOOLS calls, each with its result once the client sent it. */
export const toolCallsSchema = list(toolCallSchema, { minItems: 1, maxItems: MAX_TOOLS, what: "calls" }) as v.GenericSchema<
    unknown,
    ToolCall[]
>;

const piece = v.custom<string>(
    (value) => typeof value === "string" && value.length <= MAX_SYNTAX_CHARS,
    () => `must be a string of at most ${MAX_SYNTAX_CHARS} characters.`
);
const pieces = list(piece, { minItems: 1, maxItems: MAX_SYNTAX_PIECES, what: "strings" });

const syntaxSchema = record({
    prefixes: v.pipe(
        pieces,
        v.rawCheck(({ dataset, addIssue }) => {
            if (dataset.typed && dataset.value[0]?.trim() === "") {
                const path = [{ type: "array", origin: "value", input: dataset.value, key: 0, value: dataset.value[0] }] as const;
                addIssue({ message: "is blank; a call's prefix must show in text.", path: [...path] });
            }
        })
    ),
    paramsPrefix: piece,
    suffix: piece,
    parallel: v.optional(record({ sectionPrefixes: pieces, betweenCalls: piece, sectionSuffix: piece }))
});

/** `sampling.grammar` of kind "toolCalls": the syntax's pieces, 1 to MAX_TOOLS calls with schemas a grammar enforces, 1 to 8 calls an answer. */
export const toolCallGrammarSchema = record({
    kind: v.literal("toolCalls"),
    syntax: syntaxSchema as v.GenericSchema<unknown, ToolCallSyntax>,
    calls: list(record({ name: toolName, schema: enforceableSchema }), { minItems: 1, maxItems: MAX_TOOLS, what: "calls" }),
    maxCalls: integer(
        1,
        MAX_GRAMMAR_CALLS,
        (issue) => `must be a whole number from 1 to ${MAX_GRAMMAR_CALLS}; got ${describeValue(issue.input)}.`
    )
}) as v.GenericSchema<unknown, Extract<GrammarSpec, { kind: "toolCalls" }>>;

/** Whether `value` is a record whose `kind` is "toolCalls" (the grammar's kind decides which fields are read). */
export function isToolCallGrammar(value: unknown): boolean {
    return isRecord(value) && value.kind === "toolCalls";
}
