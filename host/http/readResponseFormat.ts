// OpenAI's `response_format` and `logit_bias`, read into the engine's grammar and token bias.
import type { GrammarSpec, TokenBias } from "../../contract/engineProtocol.js";
import { turnLimits } from "../../contract/limits.js";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";
import { readGrammarSchema } from "../../contract/rpc/readGrammarSchema.js";
import { jsonObjectProblem, MAX_TOKEN_ID } from "../../contract/rpc/turnSchemas.js";
import { invalidRequest } from "./OpenAiError.js";

const jsonSchemaFields = new Set(["name", "description", "schema", "strict"]);

/**
 * `{type: "text"}` (no grammar), `{type: "json_object"}` (any JSON object) or `{type: "json_schema",
 * json_schema: {name, description?, schema?, strict?}}`: JSON of the schema, enforced by grammar
 * whether `strict` is true or not (a grammar has no "best effort"); without a schema, any JSON object.
 * A schema part the grammar cannot enforce is refused with its path.
 */
export function readResponseFormat(value: unknown): GrammarSpec | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (!isRecord(value)) {
        throw invalidRequest("response_format must be an object with a type.", "response_format");
    }
    for (const key of Object.keys(value)) {
        if (key !== "type" && !(key === "json_schema" && value.type === "json_schema")) {
            throw invalidRequest(
                `response_format.${key} is not served by Kvault; leave it out.`,
                `response_format.${key}`,
                "unsupported_parameter"
            );
        }
    }
    switch (value.type) {
        case "text":
            return undefined;
        case "json_object":
            return { kind: "json" };
        case "json_schema":
            return readJsonSchemaFormat(value.json_schema);
        default:
            throw invalidRequest(
                `response_format.type must be "text", "json_object" or "json_schema"; got ${JSON.stringify(value.type) ?? "nothing"}.`,
                "response_format.type"
            );
    }
}

function readJsonSchemaFormat(value: unknown): GrammarSpec {
    const where = "response_format.json_schema";
    if (!isRecord(value)) {
        throw invalidRequest(`${where} must be an object with a name and a schema.`, where);
    }
    for (const key of Object.keys(value)) {
        if (!jsonSchemaFields.has(key)) {
            throw invalidRequest(
                `${where}.${key} is not served by Kvault (it serves name, description, schema, strict); leave it out.`,
                `${where}.${key}`,
                "unsupported_parameter"
            );
        }
    }
    if (typeof value.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(value.name)) {
        throw invalidRequest(`${where}.name must be 1 to 64 letters, digits, _ or -.`, `${where}.name`);
    }
    if (value.description !== undefined && typeof value.description !== "string") {
        throw invalidRequest(`${where}.description must be a string.`, `${where}.description`);
    }
    if (value.strict !== undefined && value.strict !== null && typeof value.strict !== "boolean") {
        throw invalidRequest(`${where}.strict must be true or false.`, `${where}.strict`);
    }
    if (value.schema === undefined || value.schema === null) {
        return { kind: "json" };
    }
    const problem = jsonObjectProblem(value.schema);
    if (problem !== undefined) {
        throw invalidRequest(`${where}.schema ${problem}`, `${where}.schema`);
    }
    const schema = value.schema as Record<string, unknown>;
    const read = readGrammarSchema(schema);
    if (!read.ok) {
        throw invalidRequest(`${where}.schema${read.path} ${read.reason}`, `${where}.schema${read.path}`, read.code);
    }
    return { kind: "jsonSchema", schema };
}

/** `logit_bias`: token id (as a string key) → bias in [-100, 100], added to the token's logit. */
export function readLogitBias(value: unknown): TokenBias[] | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (!isRecord(value)) {
        throw invalidRequest("logit_bias must be an object of token id → bias.", "logit_bias");
    }
    const entries = Object.entries(value);
    if (entries.length > turnLimits.maxTokenBiases) {
        throw invalidRequest(`logit_bias has ${entries.length} entries; the limit is ${turnLimits.maxTokenBiases}.`, "logit_bias");
    }
    return entries.map(([key, bias]) => {
        const token = Number(key);
        if (!/^\d+$/.test(key) || !Number.isSafeInteger(token) || token > MAX_TOKEN_ID) {
            throw invalidRequest(`logit_bias key ${JSON.stringify(key)} must be a token id (a whole number of 0 or more).`, "logit_bias");
        }
        if (typeof bias !== "number" || !Number.isFinite(bias) || bias < -100 || bias > 100) {
            throw invalidRequest(`logit_bias["${key}"] must be a number from -100 to 100.`, "logit_bias");
        }
        return { token, bias };
    });
}
