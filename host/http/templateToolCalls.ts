// Tool calls written in the chat template's own syntax (the engine's ToolCallSyntax, read from
// node-llama-cpp's wrapper): `prefix name paramsPrefix {json} suffix`, several of them between a
// section's prefix and suffix where the template writes parallel calls. Whitespace around the
// pieces is not significant (a template's line breaks vary with how the model was tokenized); a
// suffix that ends the text part-way is taken as ended (the engine stops at the template's
// end-of-turn token, which may be part of the suffix, and drops it from the text).
import type { ToolCallSyntax } from "../../contract/engineProtocol.js";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";

/** A call as the template wrote it: the function's name and its arguments' JSON object. */
export interface TemplateCall {
    readonly name: string;
    readonly arguments: Readonly<Record<string, unknown>>;
}

/** More calls than any answer holds (the host's grammar allows at most 8); a bound on the loop. */
const MAX_CALLS = 128;
const NAME = /^[A-Za-z0-9_.-]{1,64}/;

/** The calls the whole text makes in the template's syntax, or undefined when it is not (only) calls. */
export function parseTemplateCalls(text: string, syntax: ToolCallSyntax): TemplateCall[] | undefined {
    let rest: string | undefined = text;
    if (syntax.parallel !== undefined) {
        rest = eatAny(rest, syntax.parallel.sectionPrefixes) ?? rest;
    }
    const calls: TemplateCall[] = [];
    while (calls.length < MAX_CALLS) {
        rest = eatAny(rest, syntax.prefixes)?.trimStart();
        const name = rest === undefined ? undefined : NAME.exec(rest)?.[0];
        if (rest === undefined || name === undefined) {
            return undefined;
        }
        rest = eat(rest.slice(name.length), fill(syntax.paramsPrefix, name));
        if (rest === undefined) {
            return undefined;
        }
        const suffix = fill(syntax.suffix, name);
        const args = readArguments(rest, suffix);
        if (args === undefined) {
            return undefined;
        }
        calls.push({ name, arguments: args.value });
        rest = endOf(args.rest, suffix);
        if (rest === undefined) {
            return undefined;
        }
        if (rest.trim() === "") {
            return calls;
        }
        if (syntax.parallel === undefined) {
            return undefined;
        }
        const sectionEnd = endOf(rest, syntax.parallel.sectionSuffix);
        if (syntax.parallel.sectionSuffix.trim() !== "" && sectionEnd !== undefined && sectionEnd.trim() === "") {
            return calls;
        }
        rest = eat(rest, syntax.parallel.betweenCalls) ?? rest;
    }
    return undefined;
}

/**
 * Whether streamed text may still turn out to be a call in the template's syntax: it is blank, the
 * beginning of a prefix (or of a section's prefix and then a call's), or starts with one.
 */
export function mayBeTemplateCall(textSoFar: string, syntax: ToolCallSyntax): boolean {
    const start = textSoFar.trimStart();
    const openings = [
        ...syntax.prefixes,
        ...(syntax.parallel?.sectionPrefixes ?? []).flatMap((section) => syntax.prefixes.map((prefix) => section + prefix))
    ].map((opening) => opening.replace(/\s+/g, ""));
    const compact = start.replace(/\s+/g, "");
    return openings.some((opening) => opening.startsWith(compact) || compact.startsWith(opening));
}

/** `{{functionName}}` filled in, as the wrapper fills it. */
function fill(piece: string, name: string): string {
    return piece.replaceAll("{{functionName}}", name);
}

/** The text after `piece`, whitespace before either not counted; the text itself for a blank piece; undefined when it does not start so. */
function eat(text: string, piece: string): string | undefined {
    const wanted = piece.trim();
    const start = text.trimStart();
    if (wanted === "") {
        return text;
    }
    if (!start.startsWith(wanted)) {
        return undefined;
    }
    return start.slice(wanted.length);
}

/** eat for the longest of the pieces that the text starts with. */
function eatAny(text: string, pieces: readonly string[]): string | undefined {
    const sorted = [...pieces].filter((piece) => piece.trim() !== "").sort((a, b) => b.trim().length - a.trim().length);
    for (const piece of sorted) {
        const rest = eat(text, piece);
        if (rest !== undefined) {
            return rest;
        }
    }
    return undefined;
}

/** The text after `suffix`; "" when the text ends part-way into it (cut by the end-of-turn token); undefined otherwise. */
function endOf(text: string, suffix: string): string | undefined {
    const wanted = suffix.trim();
    const start = text.trimStart();
    if (start.startsWith(wanted)) {
        return start.slice(wanted.length);
    }
    const end = start.trimEnd();
    return end !== "" && wanted.startsWith(end) ? "" : start === "" ? "" : undefined;
}

/** The call's arguments: a JSON object up to where it closes, or none (`{}`) when the suffix comes first. */
function readArguments(text: string, suffix: string): { readonly value: Record<string, unknown>; readonly rest: string } | undefined {
    const start = text.trimStart();
    if (!start.startsWith("{")) {
        return endOf(start, suffix) === undefined ? undefined : { value: {}, rest: start };
    }
    const length = jsonObjectLength(start);
    if (length === undefined) {
        return undefined;
    }
    let value: unknown;
    try {
        value = JSON.parse(start.slice(0, length));
    } catch {
        return undefined;
    }
    return isRecord(value) ? { value, rest: start.slice(length) } : undefined;
}

/** The length of the JSON object `text` starts with (by its brackets, strings skipped), or undefined when it does not close. */
function jsonObjectLength(text: string): number | undefined {
    let depth = 0;
    let inString = false;
    for (let index = 0; index < text.length; index++) {
        const char = text[index];
        if (inString) {
            if (char === "\\") {
                index++;
            } else if (char === '"') {
                inString = false;
            }
        } else if (char === '"') {
            inString = true;
        } else if (char === "{" || char === "[") {
            depth++;
        } else if (char === "}" || char === "]") {
            depth--;
            if (depth === 0) {
                return index + 1;
            }
        }
    }
    return undefined;
}
