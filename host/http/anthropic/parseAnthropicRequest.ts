// A `POST /v1/messages` (or `/v1/messages/count_tokens`) body, validated field by field: every
// field Kvault serves is read, `thinking` is taken only disabled, and any other field is refused by
// name with the list of those served (docs/http-api.md, Anthropic's Messages API).
import type { ChatMessage, SamplingParams } from "../../../contract/engineProtocol.js";
import { isRecord } from "../../../contract/rpc/fieldSchemas.js";
import { turnLimits } from "../../../contract/limits.js";
import {
    describe,
    isAbsent,
    optionalBoolean,
    optionalInteger,
    optionalNumber,
    optionalStop,
    refuseUnlessNeutral,
    requiredString
} from "../bodyFields.js";
import { invalidRequest, OpenAiError } from "../OpenAiError.js";
import { readTools, type ToolUse } from "../readTools.js";
import { parseAnthropicMessages, refuseUnlisted } from "./parseAnthropicMessages.js";

/** Fields of `POST /v1/messages` Kvault serves. */
export const servedMessagesFields = [
    "model",
    "messages",
    "system",
    "max_tokens",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "tools",
    "tool_choice",
    "thinking"
] as const;

/** Fields of `POST /v1/messages/count_tokens` Kvault serves. */
export const servedCountTokensFields = ["model", "messages", "system", "tools", "tool_choice", "thinking"] as const;

const toolFields = ["name", "description", "input_schema", "type", "cache_control"];
const metadataFields = ["user_id"];

export interface AnthropicRequest {
    readonly model: string;
    readonly messages: readonly ChatMessage[];
    readonly stream: boolean;
    readonly sampling: SamplingParams;
    /** `metadata.user_id`: the workspace it names, in the key's namespace. */
    readonly userId?: string;
    readonly tools?: ToolUse;
}

/** A messages body; `countOnly` reads count_tokens' fields, where max_tokens and sampling are not sent. */
export function parseAnthropicRequest(body: unknown, countOnly = false): AnthropicRequest {
    if (!isRecord(body)) {
        throw invalidRequest("The request body must be a JSON object.");
    }
    const served: readonly string[] = countOnly ? servedCountTokensFields : servedMessagesFields;
    const unknown = Object.keys(body).find((key) => !served.includes(key));
    if (unknown !== undefined) {
        throw invalidRequest(
            `${unknown.slice(0, 100)} is not served by Kvault; leave it out. Kvault serves ${served.join(", ")} here (see docs/http-api.md, Anthropic's Messages API).`,
            unknown.slice(0, 100),
            "unsupported_parameter"
        );
    }
    const model = requiredString(body.model, "model", "use the id from GET /v1/models");
    const messages = parseAnthropicMessages(body.messages, body.system);
    refuseUnlessNeutral(
        body.thinking,
        "thinking",
        (value) => isRecord(value) && value.type === "disabled" && Object.keys(value).length === 1,
        'Kvault does not serve extended thinking; send {"type": "disabled"} or leave it out.'
    );
    const tools = readAnthropicTools(body.tools, body.tool_choice);
    const maxTokens = countOnly ? 1 : optionalInteger(body.max_tokens, "max_tokens", 1, 1_048_576);
    if (maxTokens === undefined) {
        throw invalidRequest("max_tokens is required: the most tokens the answer may have (1 or more).", "max_tokens");
    }
    const userId = readMetadata(body.metadata);
    return {
        model,
        messages,
        stream: optionalBoolean(body.stream, "stream") ?? false,
        sampling: {
            // Anthropic's default temperature and range
            temperature: optionalNumber(body.temperature, "temperature", 0, 1) ?? 1,
            topP: optionalNumber(body.top_p, "top_p", 0, 1),
            topK: optionalInteger(body.top_k, "top_k", 0, 1_000_000),
            maxTokens,
            stop: optionalStop(body.stop_sequences, "stop_sequences", turnLimits.maxStopStrings),
            ...(tools?.grammar === undefined ? {} : { grammar: tools.grammar })
        },
        ...(userId === undefined ? {} : { userId }),
        ...(tools === undefined ? {} : { tools })
    };
}

function readMetadata(value: unknown): string | undefined {
    if (isAbsent(value)) {
        return undefined;
    }
    if (!isRecord(value)) {
        throw invalidRequest(`metadata must be an object {user_id}; got ${describe(value)}.`, "metadata");
    }
    refuseUnlisted(value, metadataFields, "metadata", "it serves user_id, the workspace");
    if (isAbsent(value.user_id) || value.user_id === "") {
        return undefined;
    }
    if (typeof value.user_id !== "string" || value.user_id.length > 256) {
        throw invalidRequest("metadata.user_id must be a string of at most 256 characters.", "metadata.user_id");
    }
    return value.user_id;
}

/**
 * Anthropic's custom tools and tool_choice (auto, any, tool, none; disable_parallel_tool_use), read
 * by readTools as OpenAI's function tools are, so the same grammar holds a required call; its
 * messages name Anthropic's fields.
 */
function readAnthropicTools(tools: unknown, choice: unknown): ToolUse | undefined {
    if (isAbsent(tools) && isAbsent(choice)) {
        return undefined;
    }
    if (!isAbsent(tools) && !Array.isArray(tools)) {
        throw invalidRequest(`tools must be a list of tools; got ${describe(tools)}.`, "tools");
    }
    const functions = ((tools ?? []) as unknown[]).map((tool, index) => {
        const where = `tools[${index}]`;
        if (!isRecord(tool)) {
            throw invalidRequest(`${where} must be an object {name, description, input_schema}.`, where);
        }
        if (!isAbsent(tool.type) && tool.type !== "custom") {
            throw invalidRequest(
                `${where}.type ${describe(tool.type)} is not served by Kvault (it serves custom tools: {name, description, input_schema}); leave that tool out.`,
                `${where}.type`,
                "unsupported_parameter"
            );
        }
        refuseUnlisted(tool, toolFields, where, "a tool is its name, description and input_schema");
        return {
            type: "function",
            function: {
                name: tool.name,
                ...(isAbsent(tool.description) ? {} : { description: tool.description }),
                ...(isAbsent(tool.input_schema) ? {} : { parameters: tool.input_schema })
            }
        };
    });
    const { toolChoice, parallel } = readAnthropicChoice(choice);
    try {
        return readTools({ tools: functions, tool_choice: toolChoice, parallel_tool_calls: parallel });
    } catch (error) {
        if (!(error instanceof OpenAiError)) {
            throw error;
        }
        const rename = (text: string): string => text.replaceAll(".function.parameters", ".input_schema").replaceAll(".function.", ".");
        throw new OpenAiError(
            error.status,
            rename(error.message),
            error.type,
            error.code,
            error.param === null ? null : rename(error.param)
        );
    }
}

function readAnthropicChoice(choice: unknown): { toolChoice: unknown; parallel: boolean } {
    if (isAbsent(choice)) {
        return { toolChoice: undefined, parallel: true };
    }
    if (!isRecord(choice)) {
        throw invalidRequest(
            `tool_choice must be an object {type: "auto" | "any" | "tool" | "none"}; got ${describe(choice)}.`,
            "tool_choice"
        );
    }
    refuseUnlisted(
        choice,
        ["type", "name", "disable_parallel_tool_use"],
        "tool_choice",
        "it is its type, name and disable_parallel_tool_use"
    );
    const parallel = optionalBoolean(choice.disable_parallel_tool_use, "tool_choice.disable_parallel_tool_use") !== true;
    switch (choice.type) {
        case "auto":
            return { toolChoice: "auto", parallel };
        case "any":
            return { toolChoice: "required", parallel };
        case "none":
            return { toolChoice: "none", parallel };
        case "tool":
            if (typeof choice.name !== "string") {
                throw invalidRequest('tool_choice.name is required with type "tool": the name of the tool to call.', "tool_choice.name");
            }
            return { toolChoice: { type: "function", function: { name: choice.name } }, parallel };
        default:
            throw invalidRequest(
                `tool_choice.type must be "auto", "any", "tool" or "none"; got ${describe(choice.type)}.`,
                "tool_choice.type"
            );
    }
}
