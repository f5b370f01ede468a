// Whether a value is a JSON object within the turn's limits, and a JSON schema a grammar enforces
// in full: predicates about a field ("must be …"), shared by the turn's schema and the HTTP APIs.
import type { JsonObject } from "../engineProtocol.js";
import { formatBytes, turnLimits, utf8ByteLength } from "../limits.js";
import { readGrammarSchema } from "./readGrammarSchema.js";
import { describeValue, isRecord } from "./fieldSchemas.js";

/** Why `value` is not a JSON schema a grammar can enforce in full (a predicate about the field), or undefined when it is one. */
export function grammarSchemaProblem(value: unknown): string | undefined {
    const problem = jsonObjectProblem(value);
    if (problem !== undefined) {
        return problem;
    }
    const read = readGrammarSchema(value as JsonObject);
    if (read.ok) {
        return undefined;
    }
    const part = read.code === "ambiguous_schema" ? "has a part too ambiguous for a grammar" : "has a part Kvault cannot enforce";
    return read.path === "" ? read.reason : `${part}: ${read.path.slice(1)} ${read.reason}`;
}

/**
 * Why `value` is not a JSON object within turnLimits' size and depth (as a predicate about the
 * field: "must be …"), or undefined when it is one. Visits at most as many values as the limit
 * has bytes (each takes at least one in JSON), so a cycle or a huge value is bounded work.
 */
export function jsonObjectProblem(value: unknown): string | undefined {
    if (!isRecord(value)) {
        return `must be a JSON object; got ${describeValue(value)}.`;
    }
    const maxBytes = turnLimits.maxGrammarSchemaBytes;
    const maxDepth = turnLimits.maxGrammarSchemaDepth;
    let numValues = 0;
    const visit = (item: unknown, depth: number, where: string): string | undefined => {
        numValues++;
        if (numValues > maxBytes) {
            return `must be at most ${formatBytes(maxBytes)} of JSON; it has more than ${numValues.toLocaleString("en-US")} values.`;
        }
        if (depth > maxDepth) {
            return `must nest at most ${maxDepth} levels deep; ${where} is deeper.`;
        }
        if (item === null || typeof item === "boolean" || typeof item === "string") {
            return undefined;
        }
        if (typeof item === "number") {
            return Number.isFinite(item) ? undefined : `must be JSON; ${where} is ${String(item)}.`;
        }
        if (Array.isArray(item)) {
            for (let index = 0; index < item.length; index++) {
                const problem = visit(item[index], depth + 1, `${where}[${index}]`);
                if (problem !== undefined) {
                    return problem;
                }
            }
            return undefined;
        }
        if (isRecord(item) && [Object.prototype, null].includes(Object.getPrototypeOf(item) as object | null)) {
            for (const [key, child] of Object.entries(item)) {
                const problem = visit(child, depth + 1, `${where}.${key}`);
                if (problem !== undefined) {
                    return problem;
                }
            }
            return undefined;
        }
        return `must be JSON; ${where} is ${describeValue(item)}.`;
    };
    const problem = visit(value, 0, "the schema");
    if (problem !== undefined) {
        return problem;
    }
    const numBytes = utf8ByteLength(JSON.stringify(value));
    return numBytes <= maxBytes ? undefined : `must be at most ${formatBytes(maxBytes)} of JSON; it has ${formatBytes(numBytes)}.`;
}
