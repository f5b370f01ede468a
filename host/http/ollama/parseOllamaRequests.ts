import type { ChatMessage, JsonObject, RawPrompt, SamplingParams } from "../../../contract/engineProtocol.js";
import { describeGrammarRefusal, readGrammarSchema } from "../../../contract/rpc/readGrammarSchema.js";
import { jsonObjectProblem } from "../../../contract/rpc/turnSchemas.js";
import * as v from "valibot";
import { optionalBooleanField, readApiBody, readerField, refusedField, requiredReaderField, textField } from "../apiBodySchema.js";
import { describe, isAbsent, requiredString, strictObject } from "../bodyFields.js";
import { parseInputs, type EmbeddingInput } from "../embeddings/parseEmbeddings.js";
import { invalidRequest } from "../OpenAiError.js";
import { neutralList, parseOllamaMessages } from "./parseOllamaMessages.js";
import { checkOllamaEmbedOptions, parseOllamaOptions } from "./parseOllamaOptions.js";

/** What /api/chat and /api/generate both become: a turn over messages or over a raw prompt. */
export interface OllamaTurnRequest {
    readonly model: string;
    readonly stream: boolean;
    readonly messages?: readonly ChatMessage[];
    readonly prompt?: RawPrompt;
    readonly sampling: SamplingParams;
}

const modelRemedy = "use a name from GET /api/tags";
const modelField = requiredReaderField((value) => requiredString(value, "model", modelRemedy));
const unlisted = (issue: v.BaseIssue<unknown>): string => `${String(issue.input)} is not a field Kvault serves here; leave it out.`;

/** What both turn endpoints refuse: `think: true` (no reasoning split). */
const thinkField = refusedField(
    "think",
    (value) => value === false,
    "Kvault does not separate a model's thinking from its answer; send false or leave it out."
);

const chatFields = ["model", "messages", "stream", "format", "options", "keep_alive", "tools", "think"];

/** /api/chat's body, its fields in the order they are checked. */
const chatSchema = (windowTokens: number) =>
    v.strictObject(
        {
            think: thinkField,
            tools: refusedField("tools", neutralList, "Kvault does not call tools on this endpoint yet; leave tools out."),
            messages: requiredReaderField(parseOllamaMessages),
            model: modelField,
            stream: optionalBooleanField("stream"),
            options: v.optional(readerField((value) => parseOllamaOptions(value, windowTokens))),
            format: v.optional(readerField(readFormat)),
            keep_alive: v.optional(v.unknown())
        },
        unlisted
    );

/** `POST /api/chat`: Ollama's chat, through the model's chat template. `keep_alive` is read and ignored (the model stays loaded). */
export function parseOllamaChat(body: unknown, windowTokens: number): OllamaTurnRequest {
    strictObject(body, chatFields, "The request body");
    const input = readApiBody(chatSchema(windowTokens), body, { unlistedCode: null });
    return {
        model: input.model,
        stream: input.stream ?? true,
        messages: input.messages,
        sampling: withFormat(input.options ?? parseOllamaOptions(undefined, windowTokens), input.format)
    };
}

const generateFields = [
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
];

/** /api/generate's body, its fields in the order they are checked. */
const generateSchema = (windowTokens: number) =>
    v.strictObject(
        {
            think: thinkField,
            suffix: refusedField("suffix", (value) => value === "", "Kvault does not fill in the middle; leave suffix out."),
            template: refusedField(
                "template",
                (value) => value === "",
                "Kvault renders with the model's own chat template; use raw: true to send your own."
            ),
            context: refusedField(
                "context",
                neutralList,
                "Kvault keeps a conversation's KV in its workspace (the X-Kvault-Workspace header) rather than in context tokens."
            ),
            images: refusedField("images", neutralList, "Kvault runs text models only."),
            model: modelField,
            prompt: textField("prompt"),
            system: textField("system"),
            raw: optionalBooleanField("raw"),
            stream: optionalBooleanField("stream"),
            options: v.optional(readerField((value) => parseOllamaOptions(value, windowTokens))),
            format: v.optional(readerField(readFormat)),
            keep_alive: v.optional(v.unknown())
        },
        unlisted
    );

/**
 * `POST /api/generate`: the prompt (after `system`, if given) through the chat template, or as it
 * stands with `raw: true`. An empty prompt asks only that the model be loaded (`prompt` undefined
 * in the answer: nothing to generate). `suffix`, `template`, `context` and `images` are refused.
 */
export function parseOllamaGenerate(body: unknown, windowTokens: number): OllamaTurnRequest & { readonly loadOnly: boolean } {
    strictObject(body, generateFields, "The request body");
    const input = readApiBody(generateSchema(windowTokens), body, { unlistedCode: null });
    const model = input.model;
    const prompt = input.prompt ?? "";
    const system = input.system ?? undefined;
    const raw = input.raw ?? false;
    if (raw && system !== undefined) {
        throw invalidRequest("system is applied by the chat template, which raw: true leaves out; put it in the prompt instead.", "system");
    }
    const stream = input.stream ?? true;
    const sampling = withFormat(input.options ?? parseOllamaOptions(undefined, windowTokens), input.format);
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

const embedOptionsField = (windowTokens: number) => v.optional(readerField((value) => checkOllamaEmbedOptions(value, windowTokens)));

/** /api/embed's body, its fields in the order they are checked. */
const embedSchema = (windowTokens: number) =>
    v.strictObject(
        {
            model: modelField,
            truncate: refusedField(
                "truncate",
                (value) => value === false,
                "Kvault refuses an input over the window rather than cut it; send false or leave it out."
            ),
            options: embedOptionsField(windowTokens),
            dimensions: v.nullish(
                v.pipe(
                    v.unknown(),
                    v.check(
                        (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 1,
                        (issue) => `dimensions must be a whole number of at least 1; got ${describe(issue.input)}.`
                    ),
                    v.transform((value) => value as number)
                )
            ),
            input: requiredReaderField((value) => parseInputs(value, "input")),
            keep_alive: v.optional(v.unknown())
        },
        unlisted
    );

/** The legacy /api/embeddings' body (one `prompt`), its fields in the order they are checked. */
const legacyEmbedSchema = (windowTokens: number) =>
    v.strictObject(
        {
            model: modelField,
            options: embedOptionsField(windowTokens),
            prompt: requiredReaderField(legacyPrompt),
            keep_alive: v.optional(v.unknown())
        },
        unlisted
    );

/**
 * The legacy endpoint's `prompt`: one string, as Ollama's own takes it, since its answer holds one
 * vector; a list would lose every input but the first, so it is refused, pointing to /api/embed.
 */
function legacyPrompt(value: unknown): EmbeddingInput[] {
    if (typeof value !== "string") {
        const got = Array.isArray(value) ? `a list of ${value.length.toLocaleString("en-US")}` : describe(value);
        throw invalidRequest(
            `prompt must be one string: /api/embeddings answers one vector; got ${got}. For several inputs, use /api/embed with input: [...].`,
            "prompt"
        );
    }
    return parseInputs(value, "prompt");
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
    strictObject(
        body,
        legacy ? ["model", "prompt", "options", "keep_alive"] : ["model", "input", "truncate", "options", "keep_alive", "dimensions"],
        "The request body"
    );
    if (legacy) {
        const input = readApiBody(legacyEmbedSchema(windowTokens), body, { unlistedCode: null });
        return { model: input.model, inputs: input.prompt };
    }
    const input = readApiBody(embedSchema(windowTokens), body, { unlistedCode: null });
    return {
        model: input.model,
        inputs: input.input,
        ...(isAbsent(input.dimensions) ? {} : { dimensions: input.dimensions })
    };
}

const modelfileField = (name: "system" | "template" | "options") =>
    refusedField(name, () => false, `Kvault does not build models from a Modelfile; leave ${name} out.`);

/** /api/show's body, its fields in the order they are checked. */
const showSchema = v.strictObject(
    {
        system: modelfileField("system"),
        template: modelfileField("template"),
        options: modelfileField("options"),
        verbose: optionalBooleanField("verbose"),
        model: v.optional(v.unknown()),
        name: v.optional(v.unknown())
    },
    unlisted
);

/** `POST /api/show`: `model`, or the older `name`; `verbose` is accepted (the answer is the same). */
export function parseOllamaShow(body: unknown): string {
    strictObject(body, ["model", "name", "verbose", "system", "template", "options"], "The request body");
    const input = readApiBody(showSchema, body, { unlistedCode: null });
    return requiredString(input.model ?? input.name, "model", modelRemedy);
}

/**
 * Ollama's `format`: "json" (any JSON), or a JSON schema the answer must match, enforced by a
 * grammar; a schema part a grammar cannot enforce is refused, naming it (readGrammarSchema).
 */
function readFormat(format: unknown): SamplingParams["grammar"] {
    if (isAbsent(format) || format === "") {
        return undefined;
    }
    if (format === "json") {
        return { kind: "json" };
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
    return { kind: "jsonSchema", schema: read.schema };
}

function withFormat(sampling: SamplingParams, grammar: SamplingParams["grammar"]): SamplingParams {
    return grammar === undefined ? sampling : { ...sampling, grammar };
}
