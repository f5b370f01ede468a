// Valibot schemas for the API's request bodies: a body is a strict object (a key it does not list
// is refused by name with code `unsupported_parameter`, never dropped), each field a schema whose
// message names the field and says what it must be. readApiBody turns the first problem into the
// 400 OpenAiError that names the field (`param`).
import * as v from "valibot";
import { turnLimits } from "../../contract/limits.js";
import { describe, refuseUnlessNeutral } from "./bodyFields.js";
import { invalidRequest } from "./OpenAiError.js";

/** How a message reports a bad number: "must be a number from 0 to 2." or, with `got`, "…; got 7." */
export interface NumberMessages {
    readonly got?: boolean;
}

/** true, false, or absent (undefined or null: the default). */
export function optionalBooleanField(name: string) {
    return v.nullish(v.boolean(`${name} must be true or false.`));
}

/** A finite number in [min, max], or absent. */
export function optionalNumberField(name: string, min: number, max: number, messages: NumberMessages = {}) {
    const message = (issue: v.BaseIssue<unknown>): string =>
        `${name} must be a number from ${min} to ${max}${messages.got === true ? `; got ${describe(issue.input)}` : ""}.`;
    return v.nullish(v.pipe(v.number(message), v.finite(message), v.minValue(min, message), v.maxValue(max, message)));
}

/** A whole number in [min, max], or absent; the range is checked before wholeness, so a message says the nearer problem. */
export function optionalIntegerField(name: string, min: number, max: number, messages: NumberMessages = {}) {
    const whole = (issue: v.BaseIssue<unknown>): string =>
        `${name} must be a whole number${messages.got === true ? `; got ${String(issue.input)}` : ""}.`;
    return v.pipe(
        optionalNumberField(name, min, max, messages),
        v.check((value) => value === undefined || value === null || Number.isInteger(value), whole)
    );
}

/**
 * A field read by a reader that throws the field's own OpenAiError (a structured field: messages,
 * tools, response_format…): the reader's message, param and code reach the client unchanged.
 */
export function readerField<T>(read: (value: unknown) => T) {
    return v.pipe(v.unknown(), v.transform(read));
}

/** A field Kvault knows and does not serve: accepted at its neutral value (or absent), else refused by name with the reason. */
export const refusedField = (name: string, isNeutral: (value: unknown) => boolean, reason: string) =>
    v.optional(readerField((value) => refuseUnlessNeutral(value, name, isNeutral, reason)));

/** A string within the engine's limit for one message (turnLimits.maxMessageChars), or absent (undefined or null). */
export const textField = (name: string) =>
    v.nullish(
        v.pipe(
            v.string((issue) => `${name} must be a string; got ${describe(issue.input)}.`),
            v.maxLength(
                turnLimits.maxMessageChars,
                (issue) =>
                    `${name} has ${(issue.input as string).length.toLocaleString("en-US")} characters; the limit is ${turnLimits.maxMessageChars.toLocaleString("en-US")}.`
            )
        )
    );

/** What an absent key reads as inside requiredReaderField: never a JSON value, so never confused with one. */
const absentKey: unique symbol = Symbol("absent key");

/**
 * A required field read by a reader that throws the field's own OpenAiError: the reader runs in the
 * schema's order even when the key is absent (it gets undefined then, and refuses it with its own
 * message), where a missing key would otherwise be the strict object's "not a field" message.
 */
export function requiredReaderField<T>(read: (value: unknown) => T) {
    return v.optional(
        readerField((value) => read(value === absentKey ? undefined : value)),
        () => absentKey
    );
}

/**
 * `body` read by `schema`, or the 400 for its first problem: the field's path is the `param`, an
 * unlisted key is `unsupported_parameter`. `at` prefixes every param (a nested object read alone). A reader's own OpenAiError passes through as it is.
 */
export function readApiBody<S extends v.GenericSchema>(
    schema: S,
    body: unknown,
    options: { readonly unlistedCode?: string | null; readonly at?: string } = {}
): v.InferOutput<S> {
    const result = v.safeParse(schema, body, { abortEarly: true });
    if (result.success) {
        return result.output;
    }
    const issue = result.issues[0];
    // `at` names a nested object read on its own (`options`, `messages[2]`): its fields' params start with it
    const path = [...(options.at === undefined ? [] : [options.at]), ...(issue.path ?? []).map((item) => item.key)];
    const param =
        path.length === 0
            ? null
            : path.map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`)).join("");
    const unlisted = issue.kind === "schema" && issue.expected === "never";
    throw invalidRequest(
        issue.message,
        param,
        unlisted ? (options.unlistedCode === undefined ? "unsupported_parameter" : options.unlistedCode) : null
    );
}
