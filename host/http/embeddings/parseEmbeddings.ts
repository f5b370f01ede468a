import { embeddingLimits } from "../../../contract/rpc/rpcSpec.js";
import { turnLimits } from "../../../contract/limits.js";
import * as v from "valibot";
import { optionalIntegerField, readApiBody, readerField } from "../apiBodySchema.js";
import { describe, strictObject } from "../bodyFields.js";
import { invalidRequest } from "../OpenAiError.js";

export type EmbeddingInput = string | readonly number[];

/** A validated `POST /v1/embeddings` body. */
export interface EmbeddingsRequest {
    readonly model: string;
    readonly inputs: readonly EmbeddingInput[];
    /** Whether `input` was a list: the answer has one entry per input either way. */
    readonly encoding: "float" | "base64";
    readonly dimensions?: number;
    readonly user?: string;
}

const servedFields = ["model", "input", "encoding_format", "dimensions", "user"];
const modelRequired = "model is required: use the id from GET /v1/models.";
const userMessage = "user must be a string of at most 256 characters.";

/** The body's schema: each field's rule; a key it does not list is refused (strictBody checks the keys first). */
const embeddingsSchema = v.strictObject(
    {
        model: v.optional(v.pipe(v.string(modelRequired), v.nonEmpty(modelRequired))),
        encoding_format: v.nullish(
            v.picklist(["float", "base64"], (issue) => `encoding_format must be "float" or "base64"; got ${describe(issue.input)}.`)
        ),
        user: v.nullish(v.pipe(v.string(userMessage), v.maxLength(256, userMessage))),
        input: v.optional(readerField((value) => parseInputs(value, "input"))),
        dimensions: optionalIntegerField("dimensions", 1, 1_000_000, { got: true })
    },
    (issue) => `${String(issue.input)} is not a field Kvault serves here; leave it out.`
);

/**
 * Validates an embeddings body by its schema: `input` a string, a list of strings, a list of token
 * ids or a list of lists of them (at most embeddingLimits.maxInputs), `encoding_format` float or
 * base64, `dimensions` (refused later unless it is the model's); any other field is refused by name.
 */
export function parseEmbeddings(body: unknown): EmbeddingsRequest {
    // the unknown key's refusal first, with the list of what is served (as every endpoint but chat words it)
    strictObject(body, servedFields, "The request body");
    const input = readApiBody(embeddingsSchema, body, { unlistedCode: null });
    if (input.model === undefined) {
        throw invalidRequest(modelRequired, "model");
    }
    return {
        model: input.model,
        inputs: input.input ?? parseInputs(undefined, "input"),
        encoding: input.encoding_format ?? "float",
        ...(input.dimensions === undefined || input.dimensions === null ? {} : { dimensions: input.dimensions }),
        ...(typeof input.user === "string" && input.user !== "" ? { user: input.user } : {})
    };
}

/** One input or a list of them, each a string or a non-empty list of token ids; shared with Ollama's `/api/embed`. */
export function parseInputs(value: unknown, name: string): EmbeddingInput[] {
    if (typeof value === "string") {
        return [checkText(value, name)];
    }
    if (!Array.isArray(value) || value.length === 0) {
        throw invalidRequest(`${name} must be a string, a list of strings or a list of token ids; got ${describe(value)}.`, name);
    }
    if (value.every((item) => typeof item === "number")) {
        return [tokenIds(value, name)];
    }
    if (value.length > embeddingLimits.maxInputs) {
        throw invalidRequest(
            `${name} holds ${value.length.toLocaleString("en-US")} inputs; one request takes at most ${embeddingLimits.maxInputs.toLocaleString("en-US")}. Send them in batches.`,
            name
        );
    }
    return value.map((item: unknown, index) => {
        if (typeof item === "string") {
            return checkText(item, `${name}[${index}]`);
        }
        if (Array.isArray(item) && item.length > 0) {
            return tokenIds(item, `${name}[${index}]`);
        }
        throw invalidRequest(`${name}[${index}] must be a string or a non-empty list of token ids; got ${describe(item)}.`, name);
    });
}

function checkText(text: string, name: string): string {
    if (text === "") {
        throw invalidRequest(`${name} is empty; give each input some text.`, name);
    }
    if (text.length > turnLimits.maxMessageChars) {
        throw invalidRequest(
            `${name} has ${text.length.toLocaleString("en-US")} characters; the limit is ${turnLimits.maxMessageChars.toLocaleString("en-US")}.`,
            name
        );
    }
    return text;
}

function tokenIds(values: readonly unknown[], name: string): number[] {
    if (values.length > embeddingLimits.maxInputTokens) {
        throw invalidRequest(
            `${name} has ${values.length.toLocaleString("en-US")} tokens; the limit is ${embeddingLimits.maxInputTokens.toLocaleString("en-US")}.`,
            name
        );
    }
    const bad = values.findIndex((token) => typeof token !== "number" || !Number.isSafeInteger(token) || token < 0 || token >= 2 ** 31);
    if (bad >= 0) {
        throw invalidRequest(`${name}[${bad}] must be a token id (a whole number from 0); got ${describe(values[bad])}.`, name);
    }
    return values as number[];
}
