// Which JSON schemas a grammar can enforce: the parts node-llama-cpp's GbnfJsonSchema turns into
// a grammar (type, const, enum, oneOf, $ref to $defs, object properties, array items, string
// lengths and date/time formats). Anything else would be silently unenforced by node-llama-cpp
// (it ignores keywords it does not know), so it is refused here by name, before the engine.
// Annotations that constrain nothing (title, default, examples…) are dropped; anyOf is served as
// oneOf, which the grammar already enforces as "matches at least one" (anyOf's meaning).
// A schema whose alternatives would keep too many parse stacks open is refused too
// (ambiguityRefusal), since the sampler cannot be stopped inside a token.
import type { JsonObject } from "../engineProtocol.js";
import { describeValue, isRecord } from "./fieldSchemas.js";
import { ambiguityRefusal } from "./grammarAmbiguity.js";

/** The schema as node-llama-cpp takes it, or where and why it cannot be enforced (`code`: a part it cannot enforce, or too many alternatives at once). */
export type GrammarSchemaRead =
    | { readonly ok: true; readonly schema: JsonObject }
    | { readonly ok: false; readonly path: string; readonly reason: string; readonly code: GrammarSchemaRefusalCode };

export type GrammarSchemaRefusalCode = "unsupported_schema" | "ambiguous_schema";

const basicTypes = new Set(["string", "number", "integer", "boolean", "null"]);
const formats = new Set(["date-time", "time", "date"]);
/** Keywords that describe and never constrain: accepted, not enforced (nothing to enforce). */
const annotations = new Set(["title", "$schema", "$id", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly"]);
/** Keywords each form of schema may carry besides the annotations, `description` and `$defs`. */
const formKeywords: Record<string, readonly string[]> = {
    $ref: ["$ref"],
    oneOf: ["oneOf"],
    const: ["const"],
    enum: ["enum"],
    object: ["type", "properties", "additionalProperties", "required", "minProperties", "maxProperties"],
    array: ["type", "items", "prefixItems", "minItems", "maxItems"],
    string: ["type", "minLength", "maxLength", "format"],
    basic: ["type"]
};

class Refusal {
    constructor(
        readonly path: string,
        readonly reason: string
    ) {}
}

/** Reads `schema` (already checked to be JSON) into one node-llama-cpp can enforce in full, or says which part it cannot. */
export function readGrammarSchema(schema: JsonObject): GrammarSchemaRead {
    let read: JsonObject;
    try {
        read = readNode(schema, "", new Set());
    } catch (error) {
        if (error instanceof Refusal) {
            return { ok: false, path: error.path, reason: error.reason, code: "unsupported_schema" };
        }
        throw error;
    }
    // measured on the schema as sent, so that a refusal's path names anyOf where the sender wrote it
    const ambiguous = ambiguityRefusal(schema);
    return ambiguous === undefined ? { ok: true, schema: read } : { ok: false, ...ambiguous, code: "ambiguous_schema" };
}

/** The sentence for a refusal, with `prefix` (the field's own name) in front of the part's path. */
export function describeGrammarRefusal(prefix: string, refusal: { readonly path: string; readonly reason: string }): string {
    return `${prefix}${refusal.path} ${refusal.reason}`;
}

function readNode(node: unknown, path: string, defNames: ReadonlySet<string>): JsonObject {
    if (!isRecord(node)) {
        throw new Refusal(path, `must be a schema object; got ${describeValue(node)} (Kvault does not enforce true/false schemas).`);
    }
    const scope = new Set(defNames);
    const out: Record<string, unknown> = {};
    if (node.$defs !== undefined) {
        if (!isRecord(node.$defs)) {
            throw new Refusal(`${path}.$defs`, `must be an object of schemas; got ${describeValue(node.$defs)}.`);
        }
        for (const name of Object.keys(node.$defs)) {
            scope.add(name);
        }
        out.$defs = Object.fromEntries(
            Object.entries(node.$defs).map(([name, def]) => [name, readNode(def, `${path}.$defs.${name}`, scope)])
        );
    }
    if (typeof node.description === "string") {
        out.description = node.description;
    }
    const form = formOf(node, path);
    for (const key of Object.keys(node)) {
        if (
            !annotations.has(key) &&
            key !== "description" &&
            key !== "$defs" &&
            !formKeywords[form]!.includes(key === "anyOf" ? "oneOf" : key)
        ) {
            throw new Refusal(
                `${path}.${key}`,
                `is a JSON-schema keyword Kvault cannot enforce by grammar (with ${describeForm(form)} it enforces ${formKeywords[form]!.join(", ")}); remove it or check it after the answer.`
            );
        }
    }
    switch (form) {
        case "$ref": {
            const ref = node.$ref;
            const name = typeof ref === "string" && ref.startsWith("#/$defs/") ? ref.slice("#/$defs/".length) : undefined;
            if (name === undefined || !scope.has(name)) {
                throw new Refusal(`${path}.$ref`, `must be "#/$defs/<name>" of a definition in $defs; got ${describeValue(ref)}.`);
            }
            out.$ref = ref;
            break;
        }
        case "oneOf": {
            const key = node.oneOf !== undefined ? "oneOf" : "anyOf";
            const options = node[key];
            if (!Array.isArray(options) || options.length === 0) {
                throw new Refusal(`${path}.${key}`, `must be a non-empty list of schemas; got ${describeValue(options)}.`);
            }
            out.oneOf = options.map((option, index) => readNode(option, `${path}.${key}[${index}]`, scope));
            break;
        }
        case "const":
            out.const = literal(node.const, `${path}.const`);
            break;
        case "enum": {
            if (!Array.isArray(node.enum) || node.enum.length === 0) {
                throw new Refusal(`${path}.enum`, `must be a non-empty list; got ${describeValue(node.enum)}.`);
            }
            out.enum = node.enum.map((item, index) => literal(item, `${path}.enum[${index}]`));
            break;
        }
        case "object":
            readObject(node, path, scope, out);
            break;
        case "array":
            readArray(node, path, scope, out);
            break;
        case "string":
            readString(node, path, out);
            break;
        case "basic":
            out.type = node.type;
            break;
    }
    return out;
}

function formOf(node: Record<string, unknown>, path: string): string {
    const forms = ["$ref", "oneOf", "anyOf", "const", "enum", "type"].filter((key) => node[key] !== undefined);
    if (forms.length === 0) {
        throw new Refusal(
            path,
            "must say what it allows: type, const, enum, oneOf, anyOf or $ref (Kvault does not enforce an empty schema)."
        );
    }
    if (forms.length > 1) {
        throw new Refusal(path, `combines ${forms.join(" and ")}; Kvault enforces one of them per schema (put the alternatives in oneOf).`);
    }
    const form = forms[0]!;
    if (form === "anyOf") {
        return "oneOf";
    }
    if (form !== "type") {
        return form;
    }
    const type = node.type;
    if (type === "object" || type === "array" || type === "string") {
        return type;
    }
    const types = Array.isArray(type) ? type : [type];
    if (types.length === 0 || !types.every((item) => typeof item === "string" && basicTypes.has(item))) {
        throw new Refusal(
            `${path}.type`,
            `must be "object", "array" or one or a list of "string", "number", "integer", "boolean", "null"; got ${describeValue(type)}.`
        );
    }
    return "basic";
}

function describeForm(form: string): string {
    return form === "basic" || form === "object" || form === "array" || form === "string"
        ? `type ${form === "basic" ? "number, boolean…" : form}`
        : form;
}

function literal(value: unknown, path: string): string | number | boolean | null {
    if (value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
        return value;
    }
    throw new Refusal(
        path,
        `must be a string, number, boolean or null (Kvault enforces no object or list constants); got ${describeValue(value)}.`
    );
}

function count(node: Record<string, unknown>, key: string, path: string, out: Record<string, unknown>): void {
    const value = node[key];
    if (value === undefined) {
        return;
    }
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
        throw new Refusal(`${path}.${key}`, `must be a whole number of at least 0; got ${describeValue(value)}.`);
    }
    out[key] = value;
}

function readObject(node: Record<string, unknown>, path: string, scope: ReadonlySet<string>, out: Record<string, unknown>): void {
    out.type = "object";
    const properties = node.properties ?? {};
    if (!isRecord(properties)) {
        throw new Refusal(`${path}.properties`, `must be an object of schemas; got ${describeValue(properties)}.`);
    }
    out.properties = Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, readNode(property, `${path}.properties.${name}`, scope)])
    );
    // The grammar writes every listed property, so any `required` subset of them is met.
    if (node.required !== undefined) {
        const required = node.required;
        if (!Array.isArray(required) || !required.every((name) => typeof name === "string")) {
            throw new Refusal(`${path}.required`, `must be a list of property names; got ${describeValue(required)}.`);
        }
        const missing = required.find((name) => !Object.hasOwn(properties, name as string));
        if (missing !== undefined) {
            throw new Refusal(
                `${path}.required`,
                `names ${describeValue(missing)}, which is not in properties; Kvault writes only listed properties.`
            );
        }
    }
    const additional = node.additionalProperties;
    if (additional !== undefined && additional !== false) {
        out.additionalProperties = additional === true ? true : readNode(additional, `${path}.additionalProperties`, scope);
    }
    count(node, "minProperties", path, out);
    count(node, "maxProperties", path, out);
}

function readArray(node: Record<string, unknown>, path: string, scope: ReadonlySet<string>, out: Record<string, unknown>): void {
    out.type = "array";
    if (node.items !== undefined) {
        out.items = readNode(node.items, `${path}.items`, scope);
    }
    if (node.prefixItems !== undefined) {
        if (!Array.isArray(node.prefixItems)) {
            throw new Refusal(`${path}.prefixItems`, `must be a list of schemas; got ${describeValue(node.prefixItems)}.`);
        }
        out.prefixItems = node.prefixItems.map((item, index) => readNode(item, `${path}.prefixItems[${index}]`, scope));
    }
    count(node, "minItems", path, out);
    count(node, "maxItems", path, out);
}

function readString(node: Record<string, unknown>, path: string, out: Record<string, unknown>): void {
    out.type = "string";
    if (node.format !== undefined) {
        if (typeof node.format !== "string" || !formats.has(node.format)) {
            throw new Refusal(
                `${path}.format`,
                `must be "date-time", "time" or "date" (the formats Kvault enforces); got ${describeValue(node.format)}.`
            );
        }
        if (node.minLength !== undefined || node.maxLength !== undefined) {
            throw new Refusal(path, "combines format with minLength or maxLength; Kvault enforces one or the other.");
        }
        out.format = node.format;
        return;
    }
    count(node, "minLength", path, out);
    count(node, "maxLength", path, out);
}
