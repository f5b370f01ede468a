import type { ChatMessage, JsonObject, RawPrompt, SamplingParams } from "../../../contract/engineProtocol.js";
import { describeGrammarRefusal, readGrammarSchema } from "../../../contract/rpc/readGrammarSchema.js";
import { jsonObjectProblem } from "../../../contract/rpc/turnSchemas.js";
import { turnLimits } from "../../../contract/limits.js";
import { describe, isAbsent, optionalBoolean, refuseUnlessNeutral, requiredString, strictObject, type Body } from "../bodyFields.js";
import { parseInputs, type EmbeddingInput } from "../embeddings/parseEmbeddings.js";
import { invalidRequest } from "../OpenAiError.js";
import { parseOllamaOptions } from "./parseOllamaOptions.js";

/** What /api/chat and /api/generate both become: a turn over messages or over a raw prompt. */
export interface OllamaTurnRequest {
    readonly model: string;
    readonly stream: boolean;
    readonly messages?: readonly ChatMessage[];
    readonly prompt?: RawPrompt;
    readonly sampling: SamplingParams;
}

const neutralList = (value: unknown): boolean => Array.isArray(value) && value.length === 0;

/** `POST /api/chat`: Ollama's chat, through the model's chat template. `keep_alive` is read and ignored (the model stays loaded). */
export function parseOllamaChat(body: unknown, windowTokens: number): OllamaTurnRequest {
    const input = strictObject(
        body,
        ["model", "messages", "stream", "format", "options", "keep_alive", "tools", "think"],
        "The request body"
    );
    refuseShared(input);
    refuseUnlessNeutral(input.tools, "tools", neutralList, "Kvault does not call tools on this endpoint yet; leave tools out.");
    if (!Array.isArray(input.messages) || input.messages.length === 0 || input.messages.length > turnLimits.maxMessages) {
        throw invalidRequest(`messages must be a list of 1 to ${turnLimits.maxMessages} messages.`, "messages");
    }
    const messages = input.messages.map((item: unknown, index) => parseMessage(item, index));
    if (messages.at(-1)!.role !== "user") {
        throw invalidRequest('The last message must have role "user": the model answers it.', `messages[${messages.length - 1}].role`);
    }
    return {
        model: requiredString(input.model, "model", "use a name from GET /api/tags"),
        stream: optionalBoolean(input.stream, "stream") ?? true,
        messages,
        sampling: withFormat(parseOllamaOptions(input.options, windowTokens), input.format)
    };
}

/**
 * `POST /api/generate`: the prompt (after `system`, if given) through the chat template, or as it
 * stands with `raw: true`. An empty prompt asks only that the model be loaded (`prompt` undefined
 * in the answer: nothing to generate). `suffix`, `template`, `context` and `images` are refused.
 */
export function parseOllamaGenerate(body: unknown, windowTokens: number): OllamaTurnRequest & { readonly loadOnly: boolean } {
    const input = strictObject(
        body,
        [
            "model",
            "prompt",
            "suffix",
            "system",
            "template",
            "context",
            "stream",
            "raw",
            "format",
            "images",
            "options",
            "keep_alive",
            "think"
        ],
        "The request body"
    );
    refuseShared(input);
    refuseUnlessNeutral(input.suffix, "suffix", (value) => value === "", "Kvault does not fill in the middle; leave suffix out.");
    refuseUnlessNeutral(
        input.template,
        "template",
        (value) => value === "",
        "Kvault renders with the model's own chat template; use raw: true to send your own."
    );
    refuseUnlessNeutral(
        input.context,
        "context",
        neutralList,
        "Kvault keeps a conversation's KV in its workspace (the X-Kvault-Workspace header) rather than in context tokens."
    );
    refuseUnlessNeutral(input.images, "images", neutralList, "Kvault runs text models only.");
    const model = requiredString(input.model, "model", "use a name from GET /api/tags");
    const prompt = isAbsent(input.prompt) ? "" : text(input.prompt, "prompt");
    const system = isAbsent(input.system) ? undefined : text(input.system, "system");
    const raw = optionalBoolean(input.raw, "raw") ?? false;
    if (raw && system !== undefined) {
        throw invalidRequest("system is applied by the chat template, which raw: true leaves out; put it in the prompt instead.", "system");
    }
    const stream = optionalBoolean(input.stream, "stream") ?? true;
    const sampling = withFormat(parseOllamaOptions(input.options, windowTokens), input.format);
    if (prompt === "") {
        return { model, stream, sampling, loadOnly: true };
    }
    return raw
        ? { model, stream, prompt: { text: prompt }, sampling, loadOnly: false }
        : {
              model,
              stream,
              messages: [
                  ...(system === undefined ? [] : [{ role: "system" as const, content: system }]),
                  { role: "user", content: prompt }
              ],
              sampling,
              loadOnly: false
          };
}

/**
 * `POST /api/embed` (`input`: a string or a list) and the legacy `POST /api/embeddings` (`prompt`:
 * one string). `truncate: true` is refused: an input over the window is a 400 with its numbers,
 * never cut. Options are refused but for `num_ctx`, checked against the window.
 */
export function parseOllamaEmbed(
    body: unknown,
    windowTokens: number,
    legacy: boolean
): { readonly model: string; readonly inputs: readonly EmbeddingInput[]; readonly dimensions?: number } {
    const input = strictObject(
        body,
        legacy ? ["model", "prompt", "options", "keep_alive"] : ["model", "input", "truncate", "options", "keep_alive", "dimensions"],
        "The request body"
    );
    const model = requiredString(input.model, "model", "use a name from GET /api/tags");
    refuseUnlessNeutral(
        input.truncate,
        "truncate",
        (value) => value === false,
        "Kvault refuses an input over the window rather than cut it; send false or leave it out."
    );
    if (!isAbsent(input.options)) {
        const options = strictObject(input.options, ["num_ctx"], "options", "options.");
        parseOllamaOptions(options, windowTokens);
    }
    const dimensions = input.dimensions;
    if (!isAbsent(dimensions) && (typeof dimensions !== "number" || !Number.isSafeInteger(dimensions) || dimensions < 1)) {
        throw invalidRequest(`dimensions must be a whole number of at least 1; got ${describe(dimensions)}.`, "dimensions");
    }
    return {
        model,
        inputs: parseInputs(legacy ? input.prompt : input.input, legacy ? "prompt" : "input"),
        ...(typeof dimensions === "number" ? { dimensions } : {})
    };
}

/** `POST /api/show`: `model`, or the older `name`; `verbose` is accepted (the answer is the same). */
export function parseOllamaShow(body: unknown): string {
    const input = strictObject(body, ["model", "name", "verbose", "system", "template", "options"], "The request body");
    for (const name of ["system", "template", "options"] as const) {
        refuseUnlessNeutral(input[name], name, () => false, `Kvault does not build models from a Modelfile; leave ${name} out.`);
    }
    optionalBoolean(input.verbose, "verbose");
    return requiredString(input.model ?? input.name, "model", "use a name from GET /api/tags");
}

/** What both turn endpoints refuse: `think: true` (no reasoning split). */
function refuseShared(input: Body): void {
    refuseUnlessNeutral(
        input.think,
        "think",
        (value) => value === false,
        "Kvault does not separate a model's thinking from its answer; send false or leave it out."
    );
}

function parseMessage(item: unknown, index: number): ChatMessage {
    const message = strictObject(
        item,
        ["role", "content", "images", "tool_calls", "thinking", "tool_name"],
        `messages[${index}]`,
        `messages[${index}].`
    );
    for (const name of ["images", "tool_calls"] as const) {
        refuseUnlessNeutral(
            message[name],
            `messages[${index}].${name}`,
            neutralList,
            `Kvault runs text chats without tools; leave ${name} out.`
        );
    }
    for (const name of ["thinking", "tool_name"] as const) {
        refuseUnlessNeutral(message[name], `messages[${index}].${name}`, (value) => value === "", `leave ${name} out.`);
    }
    const role = message.role;
    if (role !== "system" && role !== "user" && role !== "assistant") {
        throw invalidRequest(
            `messages[${index}].role must be "system", "user" or "assistant"; got ${describe(role)}.`,
            `messages[${index}].role`
        );
    }
    return { role, content: text(message.content ?? "", `messages[${index}].content`) };
}

function text(value: unknown, name: string): string {
    if (typeof value !== "string") {
        throw invalidRequest(`${name} must be a string; got ${describe(value)}.`, name);
    }
    if (value.length > turnLimits.maxMessageChars) {
        throw invalidRequest(
            `${name} has ${value.length.toLocaleString("en-US")} characters; the limit is ${turnLimits.maxMessageChars.toLocaleString("en-US")}.`,
            name
        );
    }
    return value;
}

/**
 * Ollama's `format`: "json" (any JSON), or a JSON schema the answer must match, enforced by a
 * grammar; a schema part a grammar cannot enforce is refused, naming it (readGrammarSchema).
 */
function withFormat(sampling: SamplingParams, format: unknown): SamplingParams {
    if (isAbsent(format) || format === "") {
        return sampling;
    }
    if (format === "json") {
        return { ...sampling, grammar: { kind: "json" } };
    }
    if (typeof format !== "object" || Array.isArray(format)) {
        throw invalidRequest(`format must be "json" or a JSON schema object; got ${describe(format)}.`, "format");
    }
    const problem = jsonObjectProblem(format);
    if (problem !== undefined) {
        throw invalidRequest(`format ${problem}`, "format");
    }
    const read = readGrammarSchema(format as JsonObject);
    if (!read.ok) {
        throw invalidRequest(describeGrammarRefusal("format", read), "format");
    }
    return { ...sampling, grammar: { kind: "jsonSchema", schema: read.schema } };
}
