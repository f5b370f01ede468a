// A `POST /v1/responses` body, validated field by field: every field Kvault serves is read, a few
// are taken at their neutral value only, OpenAI's bookkeeping fields are knowingly ignored, and any
// other field is refused by name with the lists (docs/http-api.md, OpenAI's Responses API).
import type { SamplingParams } from "../../../contract/engineProtocol.js";
import { isRecord } from "../../../contract/rpc/fieldSchemas.js";
import {
    describe,
    isAbsent,
    optionalBoolean,
    optionalInteger,
    optionalNumber,
    refuseUnlessNeutral,
    requiredString
} from "../bodyFields.js";
import { invalidRequest } from "../OpenAiError.js";
import { DEFAULT_MAX_TOKENS } from "../parseChatCompletion.js";
import { readTools, type ToolUse } from "../readTools.js";

/** Fields of `POST /v1/responses` Kvault serves (`truncation`, `text` and `include` at their neutral values only). */
export const servedResponsesFields = [
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "stream",
    "store",
    "previous_response_id",
    "user",
    "truncation",
    "text",
    "include"
] as const;

/** Bookkeeping for OpenAI's own storage, billing and abuse tracking: it changes nothing about the answer. */
export const ignoredResponsesFields = ["metadata", "service_tier", "prompt_cache_key", "safety_identifier"] as const;

export interface ResponsesRequest {
    readonly model: string;
    /** `input` as sent; read against the conversation previous_response_id continues (parseResponseInput). */
    readonly input: unknown;
    readonly instructions?: string;
    readonly stream: boolean;
    readonly store: boolean;
    readonly previousResponseId?: string;
    readonly user?: string;
    readonly sampling: SamplingParams;
    readonly tools?: ToolUse;
    /** The request's tools and choice as sent, echoed in the response object. */
    readonly echo: { readonly tools: readonly unknown[]; readonly toolChoice: unknown; readonly parallelToolCalls: boolean };
}

const toolFields = ["type", "name", "description", "parameters", "strict"];

export function parseResponsesRequest(body: unknown): ResponsesRequest {
    if (!isRecord(body)) {
        throw invalidRequest("The request body must be a JSON object.");
    }
    const served: readonly string[] = servedResponsesFields;
    const ignored: readonly string[] = ignoredResponsesFields;
    const unknown = Object.keys(body).find((key) => !served.includes(key) && !ignored.includes(key));
    if (unknown !== undefined) {
        throw invalidRequest(
            `${unknown.slice(0, 100)} is not served by Kvault; leave it out. Kvault serves ${served.join(", ")} and ignores ${ignored.join(", ")} (see docs/http-api.md, Responses).`,
            unknown.slice(0, 100),
            "unsupported_parameter"
        );
    }
    const model = requiredString(body.model, "model", "use the id from GET /v1/models");
    if (isAbsent(body.input)) {
        throw invalidRequest("input is required: a string, or a list of items.", "input");
    }
    if (!isAbsent(body.instructions) && typeof body.instructions !== "string") {
        throw invalidRequest(`instructions must be a string; got ${describe(body.instructions)}.`, "instructions");
    }
    if (!isAbsent(body.previous_response_id) && (typeof body.previous_response_id !== "string" || body.previous_response_id === "")) {
        throw invalidRequest("previous_response_id must be the id of an earlier response.", "previous_response_id");
    }
    if (!isAbsent(body.user) && (typeof body.user !== "string" || body.user.length > 256)) {
        throw invalidRequest("user must be a string of at most 256 characters.", "user");
    }
    refuseUnlessNeutral(
        body.truncation,
        "truncation",
        (value) => value === "disabled",
        'Kvault never drops input to fit the window ("disabled"); it refuses with the numbers.'
    );
    refuseUnlessNeutral(
        body.text,
        "text",
        (value) =>
            isRecord(value) &&
            Object.keys(value).length === 1 &&
            isRecord(value.format) &&
            value.format.type === "text" &&
            Object.keys(value.format).length === 1,
        'Kvault answers plain text here ({"format": {"type": "text"}}); use response_format on /v1/chat/completions for JSON.'
    );
    refuseUnlessNeutral(
        body.include,
        "include",
        (value) => Array.isArray(value) && value.length === 0,
        "Kvault adds nothing to the output on request (an empty list)."
    );
    const tools = readResponseTools(body.tools, body.tool_choice, body.parallel_tool_calls);
    const stored = optionalBoolean(body.store, "store") ?? true;
    return {
        model,
        input: body.input,
        ...(typeof body.instructions === "string" && body.instructions !== "" ? { instructions: body.instructions } : {}),
        stream: optionalBoolean(body.stream, "stream") ?? false,
        store: stored,
        ...(typeof body.previous_response_id === "string" ? { previousResponseId: body.previous_response_id } : {}),
        ...(typeof body.user === "string" && body.user !== "" ? { user: body.user } : {}),
        sampling: {
            temperature: optionalNumber(body.temperature, "temperature", 0, 2) ?? 1,
            topP: optionalNumber(body.top_p, "top_p", 0, 1),
            maxTokens: optionalInteger(body.max_output_tokens, "max_output_tokens", 1, 1_048_576) ?? DEFAULT_MAX_TOKENS,
            ...(tools?.grammar === undefined ? {} : { grammar: tools.grammar })
        },
        ...(tools === undefined ? {} : { tools }),
        echo: {
            tools: Array.isArray(body.tools) ? body.tools : [],
            toolChoice: body.tool_choice ?? "auto",
            parallelToolCalls: body.parallel_tool_calls !== false
        }
    };
}

/** The Responses API's function tools ({type, name, parameters} at the top level) read by readTools as chat's are. */
function readResponseTools(tools: unknown, choice: unknown, parallel: unknown): ToolUse | undefined {
    if (isAbsent(tools) && isAbsent(choice)) {
        return undefined;
    }
    if (!isAbsent(tools) && !Array.isArray(tools)) {
        throw invalidRequest(`tools must be a list of function tools; got ${describe(tools)}.`, "tools");
    }
    const functions = ((tools ?? []) as unknown[]).map((tool, index) => {
        const where = `tools[${index}]`;
        if (!isRecord(tool) || tool.type !== "function") {
            throw invalidRequest(
                `${where} must be a function tool {type: "function", name, parameters}; Kvault serves function tools only (no built-in tools).`,
                `${where}.type`,
                "unsupported_parameter"
            );
        }
        const unknown = Object.keys(tool).find((key) => !toolFields.includes(key));
        if (unknown !== undefined) {
            throw invalidRequest(
                `${where}.${unknown.slice(0, 100)} is not served by Kvault; leave it out.`,
                `${where}.${unknown.slice(0, 100)}`,
                "unsupported_parameter"
            );
        }
        const { type, ...definition } = tool;
        return { type, function: definition };
    });
    const toolChoice =
        isRecord(choice) && choice.type === "function" && typeof choice.name === "string"
            ? { type: "function", function: { name: choice.name } }
            : choice;
    return readTools({ tools: functions, tool_choice: toolChoice, parallel_tool_calls: parallel });
}
