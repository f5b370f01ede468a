// The building blocks of the RPC's params schemas (valibot). Every message is a predicate about
// its field ("must be a string; got 7."): readIssue puts the field's path in front of it
// ("messages[0].content must be a string; got 7."), so a message never has to know where its
// field sits. Descriptions of values are bounded: a huge payload is never echoed back.
import * as v from "valibot";

/** The first problem with a value, as one sentence naming the field; `ok` with the rebuilt value otherwise. */
export type Read<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/** Checks `value` against `schema`, stopping at the first problem. */
export function readWith<S extends v.GenericSchema>(schema: S, value: unknown): Read<v.InferOutput<S>> {
    const result = v.safeParse(schema, value, { abortEarly: true });
    if (result.success) {
        return { ok: true, value: result.output };
    }
    return { ok: false, reason: readIssue(result.issues[0]) };
}

/** The issue's message with its field's path in front, e.g. "sampling.stop[2] has 300 characters; …". */
export function readIssue(issue: v.BaseIssue<unknown>): string {
    const path = pathText(issue.path ?? []);
    return path === "" ? issue.message : `${path} ${issue.message}`;
}

function pathText(path: readonly v.IssuePathItem[]): string {
    let text = "";
    for (const item of path) {
        const key: unknown = item.key;
        text += typeof key === "number" ? `[${key}]` : text === "" ? String(key) : `.${String(key)}`;
    }
    return text;
}

/** A short, bounded description for a message: never echoes a huge value back. */
export function describeValue(value: unknown): string {
    if (value === undefined) {
        return "undefined";
    }
    if (value === null) {
        return "null";
    }
    if (Array.isArray(value)) {
        return `a list of ${value.length.toLocaleString("en-US")}`;
    }
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
        return String(value);
    }
    return typeof value === "object" ? "an object" : typeof value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

const got = (issue: v.BaseIssue<unknown>): string => describeValue(issue.input);

/** A string of at most `maxChars` characters. */
export function text(maxChars: number) {
    return v.pipe(
        v.string((issue) => `must be a string; got ${got(issue)}.`),
        v.check(
            (value) => value.length <= maxChars,
            (issue) =>
                `has ${(issue.input as string).length.toLocaleString("en-US")} characters; the limit is ${maxChars.toLocaleString("en-US")}.`
        )
    );
}

/** A string of 1 to `maxChars` characters that is not only spaces; `remedy` says what to give instead. */
export function nonEmptyText(maxChars: number, remedy: string, options: { readonly trim?: boolean } = {}) {
    return v.pipe(
        text(maxChars),
        v.check((value) => (options.trim === true ? value.trim() : value) !== "", `is empty; ${remedy}.`)
    );
}

/** A whole number from `min` to `max`. */
export function integer(min: number, max: number, message?: (issue: v.BaseIssue<unknown>) => string) {
    const say = message ?? ((issue) => `must be a whole number in [${min}, ${max}]; got ${got(issue)}.`);
    return v.custom<number>((value) => typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max, say);
}

/** A finite number from `min` to `max`. */
export function number(min: number, max: number) {
    return v.custom<number>(
        (value) => typeof value === "number" && Number.isFinite(value) && value >= min && value <= max,
        (issue) => `must be a number in [${min}, ${max}]; got ${got(issue)}.`
    );
}

export function boolean() {
    return v.boolean((issue) => `must be true or false; got ${got(issue)}.`);
}

/** One of `values`, e.g. a role. */
export function oneOf<const T extends readonly string[]>(values: T) {
    const listed = `${values
        .slice(0, -1)
        .map((value) => JSON.stringify(value))
        .join(", ")} or ${JSON.stringify(values.at(-1))}`;
    return v.picklist(values, (issue) => `must be ${listed}; got ${got(issue)}.`);
}

/** A list of at most `maxItems` items (at least `minItems`), each checked by `item`; holes are refused by the item's check. */
export function list<S extends v.GenericSchema>(
    item: S,
    limits: { readonly minItems?: number; readonly maxItems: number; readonly what: string }
) {
    const { minItems = 0, maxItems, what } = limits;
    const size = minItems > 0 ? `${minItems} to ${maxItems.toLocaleString("en-US")}` : `at most ${maxItems.toLocaleString("en-US")}`;
    return v.pipe(
        v.custom<unknown[]>(
            (value) => Array.isArray(value) && value.length >= minItems && value.length <= maxItems,
            (issue) => `must be a list of ${size} ${what}; got ${got(issue)}.`
        ),
        v.array(item)
    );
}

type Entries = Record<string, v.GenericSchema>;

/**
 * An object rebuilt from the fields `entries` names: others are dropped, a missing field is checked
 * as `undefined` (so it is named in the message as any other bad value would be).
 */
export function record<E extends Entries>(entries: E) {
    return v.pipe(
        v.custom<Record<string, unknown>>(isRecord, (issue) => `must be an object; got ${got(issue)}.`),
        v.transform((input) => pick(input, entries)),
        v.object(entries)
    );
}

/**
 * A method's params: an object with exactly the fields `entries` names (another field is refused by
 * name, never ignored), each checked as `record` does, then `checks` on the whole.
 */
export function params<E extends Entries>(method: string, entries: E) {
    const names = Object.keys(entries);
    return v.pipe(
        v.custom<Record<string, unknown>>(isRecord, (issue) => `${method}'s params must be an object; got ${got(issue)}.`),
        v.check(
            (input) => Object.keys(input).every((key) => Object.hasOwn(entries, key)),
            (issue) =>
                `${method} takes no field ${describeValue(Object.keys(issue.input as object).find((key) => !Object.hasOwn(entries, key)))}; its params are {${names.join(", ")}}.`
        ),
        v.transform((input) => pick(input, entries)),
        v.object(entries)
    );
}

/** The fields of `input` that `entries` names; a required one that is missing becomes `undefined`, to be refused by its schema. */
function pick(input: Record<string, unknown>, entries: Entries): Record<string, unknown> {
    const picked: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(entries)) {
        if (Object.hasOwn(input, key) || schema.type !== "optional") {
            picked[key] = input[key];
        }
    }
    return picked;
}
