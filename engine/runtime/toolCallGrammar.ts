// The grammar of a required tool call in the template's own syntax: prefix, one of the tools'
// names, paramsPrefix, arguments of that tool's JSON schema, suffix; several such calls between a
// section's prefix and betweenCalls where the syntax has a parallel section. Each tool's arguments
// grammar is node-llama-cpp's own for its schema (schemaGrammarText), its rules renamed apart
// so the tools' grammars sit side by side, its trailing newlines (node-llama-cpp's end of a JSON
// answer) left out, so the call's suffix follows the arguments directly.
import { LlamaGrammar, type Llama } from "node-llama-cpp";
import type { GrammarSpec } from "../../contract/engineProtocol.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { schemaGrammarText } from "./schemaGrammar.js";

type ToolCallsGrammar = Extract<GrammarSpec, { kind: "toolCalls" }>;

/** The GBNF text of the calls `spec` allows. */
export function toolCallGrammarText(llama: Llama, spec: ToolCallsGrammar): string {
    const { syntax } = spec;
    const rules: string[] = [];
    const alternatives = spec.calls.map((call, index) => {
        // readGrammarSchema (the turn schema, contract/rpc/toolSchemas.ts) passed the schema: only GbnfJsonSchema's forms
        const schemaGrammar = schemaGrammarText(llama, call.schema);
        rules.push(...renameRules(schemaGrammar, `call${index}-`));
        const fill = (piece: string): string => piece.replaceAll("{{functionName}}", call.name);
        return sequence([
            literal(syntax.prefixes[0]!),
            literal(call.name),
            literal(fill(syntax.paramsPrefix)),
            `call${index}-root`,
            literal(fill(syntax.suffix))
        ]);
    });
    rules.push(`call ::= ${alternatives.map((alternative) => `( ${alternative} )`).join(" | ")}`);
    const parallel = spec.maxCalls > 1 ? syntax.parallel : undefined;
    const root =
        parallel === undefined
            ? "call"
            : sequence([
                  literal(parallel.sectionPrefixes[0] ?? ""),
                  "call",
                  `( ${sequence([literal(parallel.betweenCalls), "call"])} ){0,${spec.maxCalls - 1}}`
              ]);
    return [`root ::= ${root}`, ...rules].join("\n");
}

/** toolCallGrammarText as the grammar llama.cpp samples under. */
export function createToolCallGrammar(llama: Llama, spec: ToolCallsGrammar): LlamaGrammar {
    try {
        return new LlamaGrammar(llama, { grammar: toolCallGrammarText(llama, spec) });
    } catch (error) {
        throw new InvalidRequestError(
            `The tool call grammar of ${spec.calls.length} tools could not be built (${error instanceof Error ? error.message : String(error)}); simplify the tools' parameters.`
        );
    }
}

/** A piece as a GBNF literal; "" for an empty piece (left out of a sequence). */
function literal(piece: string): string {
    return piece === "" ? "" : JSON.stringify(piece);
}

function sequence(parts: readonly string[]): string {
    return parts.filter((part) => part !== "").join(" ");
}

/**
 * A grammar's rules with every rule name (where defined and where used, never inside a literal or
 * a character class) given `prefix`, and the root rule's trailing newlines left out.
 */
export function renameRules(grammar: string, prefix: string): string[] {
    const lines = grammar.split("\n").filter((line) => line.includes("::="));
    const names = new Set(lines.map((line) => line.slice(0, line.indexOf("::=")).trim()));
    return lines.map((line) => {
        const at = line.indexOf("::=");
        const name = line.slice(0, at).trim();
        let body = renameInBody(line.slice(at + 3), names, prefix);
        if (name === "root") {
            body = body.replace(/\s*"(\\n)+"\s*\[\\n\]\*\s*$/, "");
        }
        return `${prefix}${name} ::=${body}`;
    });
}

function renameInBody(body: string, names: ReadonlySet<string>, prefix: string): string {
    let out = "";
    let index = 0;
    while (index < body.length) {
        const char = body[index]!;
        if (char === '"' || char === "[") {
            const close = char === '"' ? '"' : "]";
            let end = index + 1;
            while (end < body.length && body[end] !== close) {
                end += body[end] === "\\" ? 2 : 1;
            }
            out += body.slice(index, end + 1);
            index = end + 1;
            continue;
        }
        const word = /^[A-Za-z0-9-]+/.exec(body.slice(index))?.[0];
        if (word !== undefined) {
            out += names.has(word) ? prefix + word : word;
            index += word.length;
            continue;
        }
        out += char;
        index++;
    }
    return out;
}
