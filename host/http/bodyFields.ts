// Field readers for the API bodies of /v1/completions, /v1/embeddings and Ollama's /api/: each
// problem is a 400 that names the field, and a field a reader does not know is refused by name,
// never ignored (a client that sends it expects it to do something).
import { turnLimits } from "../../contract/limits.js";
import { invalidRequest } from "./OpenAiError.js";

export type Body = Readonly<Record<string, unknown>>;

/** The body as an object whose every field is one of `served`; `where` names it in messages ("The request", "options"). */
export function strictObject(value: unknown, served: readonly string[], where: string, prefix = ""): Body {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw invalidRequest(`${where} must be a JSON object.`, prefix === "" ? null : prefix.slice(0, -1));
    }
    const unknown = Object.keys(value).find((key) => !served.includes(key));
    if (unknown !== undefined) {
        throw invalidRequest(
            `${prefix}${unknown.slice(0, 100)} is not a field Kvault serves here; leave it out. The fields served are ${served.join(", ")}.`,
            `${prefix}${unknown.slice(0, 100)}`
        );
    }
    return value as Body;
}

/** Absent and null are the same: the default. */
export function isAbsent(value: unknown): value is undefined | null {
    return value === undefined || value === null;
}

export function optionalBoolean(value: unknown, name: string): boolean | undefined {
    if (isAbsent(value)) {
        return undefined;
    }
    if (typeof value !== "boolean") {
        throw invalidRequest(`${name} must be true or false.`, name);
    }
    return value;
}

export function optionalNumber(value: unknown, name: string, min: number, max: number): number | undefined {
    if (isAbsent(value)) {
        return undefined;
    }
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
        throw invalidRequest(`${name} must be a number from ${min} to ${max}; got ${describe(value)}.`, name);
    }
    return value;
}

export function optionalInteger(value: unknown, name: string, min: number, max: number): number | undefined {
    const number = optionalNumber(value, name, min, max);
    if (number !== undefined && !Number.isInteger(number)) {
        throw invalidRequest(`${name} must be a whole number; got ${number}.`, name);
    }
    return number;
}

export function requiredString(value: unknown, name: string, remedy: string): string {
    if (typeof value !== "string" || value === "") {
        throw invalidRequest(`${name} is required: ${remedy}.`, name);
    }
    return value;
}

/** A seed for the engine: any safe integer, folded into the engine's 32-bit range. */
export function optionalSeed(value: unknown, name: string): number | undefined {
    const seed = optionalInteger(value, name, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    return seed === undefined ? undefined : ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
}

/** A string or a list of strings, at most `maxItems` (OpenAI allows 4, the engine 16), each within the engine's limit. */
export function optionalStop(value: unknown, name: string, maxItems: number): string[] | undefined {
    if (isAbsent(value)) {
        return undefined;
    }
    const stops = typeof value === "string" ? [value] : value;
    if (
        !Array.isArray(stops) ||
        stops.length > maxItems ||
        !stops.every((item) => typeof item === "string" && item.length <= turnLimits.maxStopChars)
    ) {
        throw invalidRequest(
            `${name} must be a string or a list of up to ${maxItems} strings of at most ${turnLimits.maxStopChars} characters.`,
            name
        );
    }
    return stops as string[];
}

/** A field Kvault knows and does not serve: accepted only at its neutral value, else refused by name with the reason. */
export function refuseUnlessNeutral(value: unknown, name: string, isNeutral: (value: unknown) => boolean, reason: string): void {
    if (!isAbsent(value) && !isNeutral(value)) {
        throw invalidRequest(`${name} is not served: ${reason}`, name);
    }
}

/** Bounded, for messages: never echoes a large value. */
export function describe(value: unknown): string {
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (Array.isArray(value)) {
        return `a list of ${value.length.toLocaleString("en-US")}`;
    }
    return value === null ? "null" : typeof value === "object" ? "an object" : String(value);
}
