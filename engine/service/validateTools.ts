// The tool fields of a chat turn that crossed a process boundary (validateChatTurn): the tools the
// template describes, and the calls an assistant message made with their results.
import type { ChatMessage, GrammarSpec, JsonObject, ToolCall, ToolCallSyntax, ToolDefinition } from "../../contract/engineProtocol.js";
import { turnLimits } from "../../contract/limits.js";
import { grammarSchemaProblem } from "../../contract/rpc/turnSchemas.js";
import { InvalidRequestError } from "../request/requestErrors.js";

/** At most this many tools a turn, and calls a message: far above what a template renders usefully. */
export const MAX_TOOLS = 128;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** `tools`: a list of {name, description?, parameters?}, names unique and in OpenAI's alphabet. */
export function readTools(value: unknown): ToolDefinition[] {
    if (!Array.isArray(value) || value.length > MAX_TOOLS) {
        throw new InvalidRequestError(`tools must be a list of at most ${MAX_TOOLS} tools.`);
    }
    const names = new Set<string>();
    return value.map((item: unknown, index: number) => {
        const tool = record(item, `tools[${index}]`);
        const name = toolName(tool.name, `tools[${index}].name`);
        if (names.has(name)) {
            throw new InvalidRequestError(`tools[${index}].name "${name}" is another tool's name; each tool needs its own.`);
        }
        names.add(name);
        const description = tool.description === undefined ? undefined : text(tool.description, `tools[${index}].description`);
        let parameters: JsonObject | undefined;
        if (tool.parameters !== undefined) {
            const problem = grammarSchemaProblem(tool.parameters);
            if (problem !== undefined) {
                throw new InvalidRequestError(`tools[${index}].parameters ${problem}`);
            }
            parameters = tool.parameters as JsonObject;
        }
        return { name, ...(description === undefined ? {} : { description }), ...(parameters === undefined ? {} : { parameters }) };
    });
}

/** An assistant message's `toolCalls`; undefined when absent. Only an assistant message calls tools. */
export function readToolCalls(message: Record<string, unknown>, where: string): ToolCall[] | undefined {
    if (message.toolCalls === undefined) {
        return undefined;
    }
    if (message.role !== "assistant") {
        throw new InvalidRequestError(`${where}.toolCalls is an assistant message's; this message's role is ${String(message.role)}.`);
    }
    if (!Array.isArray(message.toolCalls) || message.toolCalls.length === 0 || message.toolCalls.length > MAX_TOOLS) {
        throw new InvalidRequestError(`${where}.toolCalls must be a list of 1 to ${MAX_TOOLS} calls.`);
    }
    return message.toolCalls.map((item: unknown, index: number) => {
        const call = record(item, `${where}.toolCalls[${index}]`);
        const result = call.result === undefined ? undefined : text(call.result, `${where}.toolCalls[${index}].result`);
        return {
            id: text(call.id, `${where}.toolCalls[${index}].id`),
            name: toolName(call.name, `${where}.toolCalls[${index}].name`),
            arguments: text(call.arguments, `${where}.toolCalls[${index}].arguments`),
            ...(result === undefined ? {} : { result })
        };
    });
}

/** At most this many calls a `toolCalls` grammar allows in one answer, and characters a piece of its syntax. */
const MAX_GRAMMAR_CALLS = 8;
const MAX_SYNTAX_CHARS = 256;

/** `sampling.grammar` of kind "toolCalls": the syntax's pieces, 1 to MAX_TOOLS calls with schemas a grammar enforces, 1 to 8 calls an answer. */
export function readToolCallGrammar(grammar: Record<string, unknown>): GrammarSpec {
    const syntax = record(grammar.syntax, "sampling.grammar.syntax");
    const parallel = syntax.parallel === undefined ? undefined : record(syntax.parallel, "sampling.grammar.syntax.parallel");
    const readSyntax: ToolCallSyntax = {
        prefixes: pieces(syntax.prefixes, "sampling.grammar.syntax.prefixes"),
        paramsPrefix: piece(syntax.paramsPrefix, "sampling.grammar.syntax.paramsPrefix"),
        suffix: piece(syntax.suffix, "sampling.grammar.syntax.suffix"),
        ...(parallel === undefined
            ? {}
            : {
                  parallel: {
                      sectionPrefixes: pieces(parallel.sectionPrefixes, "sampling.grammar.syntax.parallel.sectionPrefixes"),
                      betweenCalls: piece(parallel.betweenCalls, "sampling.grammar.syntax.parallel.betweenCalls"),
                      sectionSuffix: piece(parallel.sectionSuffix, "sampling.grammar.syntax.parallel.sectionSuffix")
                  }
              })
    };
    if (readSyntax.prefixes[0]?.trim() === "") {
        throw new InvalidRequestError("sampling.grammar.syntax.prefixes[0] is blank; a call's prefix must show in text.");
    }
    if (!Array.isArray(grammar.calls) || grammar.calls.length === 0 || grammar.calls.length > MAX_TOOLS) {
        throw new InvalidRequestError(`sampling.grammar.calls must be a list of 1 to ${MAX_TOOLS} calls.`);
    }
    const calls = grammar.calls.map((item: unknown, index: number) => {
        const call = record(item, `sampling.grammar.calls[${index}]`);
        const problem = grammarSchemaProblem(call.schema);
        if (problem !== undefined) {
            throw new InvalidRequestError(`sampling.grammar.calls[${index}].schema ${problem}`);
        }
        return { name: toolName(call.name, `sampling.grammar.calls[${index}].name`), schema: call.schema as JsonObject };
    });
    const maxCalls = grammar.maxCalls;
    if (typeof maxCalls !== "number" || !Number.isInteger(maxCalls) || maxCalls < 1 || maxCalls > MAX_GRAMMAR_CALLS) {
        throw new InvalidRequestError(
            `sampling.grammar.maxCalls must be a whole number from 1 to ${MAX_GRAMMAR_CALLS}; got ${String(maxCalls)}.`
        );
    }
    return { kind: "toolCalls", syntax: readSyntax, calls, maxCalls };
}

/** Whether the engine may answer after `last`: the user's message, or an assistant's tool calls that all have their results. */
export function isAnswerable(last: ChatMessage): boolean {
    return (
        last.role === "user" ||
        (last.role === "assistant" && last.toolCalls !== undefined && last.toolCalls.every((call) => call.result !== undefined))
    );
}

function toolName(value: unknown, name: string): string {
    if (typeof value !== "string" || !TOOL_NAME.test(value)) {
        throw new InvalidRequestError(`${name} must be 1 to 64 letters, digits, _, . or -.`);
    }
    return value;
}

function text(value: unknown, name: string): string {
    if (typeof value !== "string" || value.length > turnLimits.maxMessageChars) {
        throw new InvalidRequestError(
            `${name} must be a string of at most ${turnLimits.maxMessageChars.toLocaleString("en-US")} characters.`
        );
    }
    return value;
}

function piece(value: unknown, name: string): string {
    if (typeof value !== "string" || value.length > MAX_SYNTAX_CHARS) {
        throw new InvalidRequestError(`${name} must be a string of at most ${MAX_SYNTAX_CHARS} characters.`);
    }
    return value;
}

function pieces(value: unknown, name: string): string[] {
    if (!Array.isArray(value) || value.length === 0 || value.length > 16) {
        throw new InvalidRequestError(`${name} must be a list of 1 to 16 strings.`);
    }
    return value.map((item: unknown, index: number) => piece(item, `${name}[${index}]`));
}

function record(value: unknown, name: string): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new InvalidRequestError(`${name} must be an object.`);
    }
    return value as Record<string, unknown>;
}
