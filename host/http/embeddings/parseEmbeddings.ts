import { embeddingLimits } from "../../../contract/rpc/rpcSpec.js";
import { turnLimits } from "../../../contract/limits.js";
import { describe, isAbsent, optionalInteger, requiredString, strictObject } from "../bodyFields.js";
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

/**
 * Validates an embeddings body: `input` a string, a list of strings, a list of token ids or a list
 * of lists of them (at most embeddingLimits.maxInputs), `encoding_format` float or base64,
 * `dimensions` (refused later unless it is the model's); any other field is refused by name.
 */
export function parseEmbeddings(body: unknown): EmbeddingsRequest {
    const input = strictObject(body, ["model", "input", "encoding_format", "dimensions", "user"], "The request body");
    const model = requiredString(input.model, "model", "use the id from GET /v1/models");
    const encoding = isAbsent(input.encoding_format) ? "float" : input.encoding_format;
    if (encoding !== "float" && encoding !== "base64") {
        throw invalidRequest(`encoding_format must be "float" or "base64"; got ${describe(encoding)}.`, "encoding_format");
    }
    if (!isAbsent(input.user) && (typeof input.user !== "string" || input.user.length > 256)) {
        throw invalidRequest("user must be a string of at most 256 characters.", "user");
    }
    return {
        model,
        inputs: parseInputs(input.input, "input"),
        encoding,
        ...(isAbsent(input.dimensions) ? {} : { dimensions: optionalInteger(input.dimensions, "dimensions", 1, 1_000_000) }),
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
