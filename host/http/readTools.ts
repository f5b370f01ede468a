// OpenAI's `tools`, `tool_choice` and `parallel_tool_calls`, read into the tools the engine's chat
// template describes and, when a call is required, the grammar that enforces one: a list of
// {"name", "arguments"} objects whose arguments match the tool's parameters' schema.
import type { GrammarSpec, JsonObject, ToolDefinition } from "../../contract/engineProtocol.js";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";
import { readGrammarSchema } from "../../contract/rpc/readGrammarSchema.js";
import { MAX_TOOLS } from "../../contract/rpc/toolSchemas.js";
import { jsonObjectProblem } from "../../contract/rpc/turnSchemas.js";
import { describe, isAbsent } from "./bodyFields.js";
import { invalidRequest } from "./OpenAiError.js";

/** At most this many tools a request: the turn schema's limit. */
export { MAX_TOOLS };
/** With parallel calls, at most this many in one answer: a grammar bound, so a list always ends. */
export const MAX_PARALLEL_CALLS = 8;

/** `auto`: the model may answer or call; `required`: it calls one of the tools; `{name}`: it calls that one. */
export type ToolChoice = "auto" | "required" | { readonly name: string };

/** The tools of a request that may call them; undefined when it has none or `tool_choice` is "none". */
export interface ToolUse {
    readonly tools: readonly ToolDefinition[];
    readonly choice: ToolChoice;
    readonly parallel: boolean;
    /** For `required` and a named tool: the grammar every answer is held to. */
    readonly grammar?: GrammarSpec;
}

const functionFields = new Set(["name", "description", "parameters", "strict"]);

export function readTools(body: Readonly<Record<string, unknown>>): ToolUse | undefined {
    const tools = readToolList(body.tools);
    const parallel = readParallel(body.parallel_tool_calls);
    const choice = readToolChoice(body.tool_choice, tools);
    if (choice === "none" || tools.length === 0) {
        return undefined;
    }
    if (choice === "auto") {
        return { tools, choice, parallel };
    }
    const called = typeof choice === "string" ? tools : tools.filter((tool) => tool.name === choice.name);
    return {
        tools,
        choice,
        parallel,
        grammar: { kind: "jsonSchema", schema: callsSchema(called, parallel && typeof choice === "string") }
    };
}

/** The answer's shape under a grammar: `[{"name": …, "arguments": {…}}]`, one call, or up to MAX_PARALLEL_CALLS. */
function callsSchema(tools: readonly ToolDefinition[], parallel: boolean): JsonObject {
    const calls = tools.map((tool) => ({
        type: "object",
        properties: { name: { const: tool.name }, arguments: tool.parameters ?? { type: "object", properties: {} } },
        required: ["name", "arguments"],
        additionalProperties: false
    }));
    return {
        type: "array",
        items: calls.length === 1 ? calls[0]! : { oneOf: calls },
        minItems: 1,
        maxItems: parallel ? Math.min(MAX_PARALLEL_CALLS, Math.max(1, tools.length)) : 1
    };
}

function readToolList(value: unknown): ToolDefinition[] {
    if (isAbsent(value)) {
        return [];
    }
    if (!Array.isArray(value) || value.length > MAX_TOOLS) {
        throw invalidRequest(`tools must be a list of at most ${MAX_TOOLS} tools; got ${describe(value)}.`, "tools");
    }
    const names = new Set<string>();
    return value.map((item: unknown, index: number) => {
        const where = `tools[${index}]`;
        if (!isRecord(item)) {
            throw invalidRequest(`${where} must be an object {type: "function", function: {...}}.`, where);
        }
        if (item.type !== "function") {
            throw invalidRequest(
                `${where}.type must be "function" (Kvault serves function tools); got ${describe(item.type)}.`,
                `${where}.type`,
                "unsupported_parameter"
            );
        }
        for (const key of Object.keys(item)) {
            if (key !== "type" && key !== "function") {
                throw invalidRequest(`${where}.${key} is not served by Kvault; leave it out.`, `${where}.${key}`, "unsupported_parameter");
            }
        }
        const tool = readFunction(item.function, `${where}.function`);
        if (names.has(tool.name)) {
            throw invalidRequest(
                `${where}.function.name "${tool.name}" is another tool's; give each tool its own name.`,
                `${where}.function.name`
            );
        }
        names.add(tool.name);
        return tool;
    });
}

function readFunction(value: unknown, where: string): ToolDefinition {
    if (!isRecord(value)) {
        throw invalidRequest(`${where} must be an object with a name.`, where);
    }
    for (const key of Object.keys(value)) {
        if (!functionFields.has(key)) {
            throw invalidRequest(
                `${where}.${key} is not served by Kvault (it serves name, description, parameters, strict); leave it out.`,
                `${where}.${key}`,
                "unsupported_parameter"
            );
        }
    }
    if (typeof value.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(value.name)) {
        throw invalidRequest(`${where}.name must be 1 to 64 letters, digits, _ or -.`, `${where}.name`);
    }
    if (!isAbsent(value.description) && typeof value.description !== "string") {
        throw invalidRequest(`${where}.description must be a string.`, `${where}.description`);
    }
    if (!isAbsent(value.strict) && typeof value.strict !== "boolean") {
        throw invalidRequest(`${where}.strict must be true or false.`, `${where}.strict`);
    }
    const description = typeof value.description === "string" ? value.description : undefined;
    if (isAbsent(value.parameters)) {
        return { name: value.name, ...(description === undefined ? {} : { description }) };
    }
    const problem = jsonObjectProblem(value.parameters);
    if (problem !== undefined) {
        throw invalidRequest(`${where}.parameters ${problem}`, `${where}.parameters`);
    }
    // the schema a grammar enforces when a call is required; refused by path where it cannot be
    const read = readGrammarSchema(value.parameters as JsonObject);
    if (!read.ok) {
        throw invalidRequest(`${where}.parameters${read.path} ${read.reason}`, `${where}.parameters${read.path}`, read.code);
    }
    return { name: value.name, ...(description === undefined ? {} : { description }), parameters: read.schema };
}

function readParallel(value: unknown): boolean {
    if (isAbsent(value)) {
        return true; // OpenAI's default
    }
    if (typeof value !== "boolean") {
        throw invalidRequest("parallel_tool_calls must be true or false.", "parallel_tool_calls");
    }
    return value;
}

function readToolChoice(value: unknown, tools: readonly ToolDefinition[]): ToolChoice | "none" {
    if (isAbsent(value)) {
        return "auto"; // OpenAI's default with tools; without tools nothing is called either way
    }
    if (value === "none") {
        return "none";
    }
    if (value === "auto" || value === "required") {
        if (value === "required" && tools.length === 0) {
            throw invalidRequest('tool_choice is "required" but tools is empty; send the tools the model must choose from.', "tool_choice");
        }
        return value;
    }
    if (isRecord(value) && value.type === "function" && isRecord(value.function) && typeof value.function.name === "string") {
        const name = value.function.name;
        if (!tools.some((tool) => tool.name === name)) {
            throw invalidRequest(
                `tool_choice names the function "${name.slice(0, 64)}", which is not among tools (${tools.map((tool) => tool.name).join(", ") || "none"}).`,
                "tool_choice.function.name"
            );
        }
        return { name };
    }
    throw invalidRequest(
        'tool_choice must be "none", "auto", "required" or {type: "function", function: {name}}; Kvault serves these (allowed_tools and custom tools are not).',
        "tool_choice",
        "unsupported_parameter"
    );
}
