// The grammar an answer held to a JSON schema samples under: node-llama-cpp's own for the schema,
// its alternations of literals (enums, oneOfs of consts) written as tries, so that an enum of
// thousands of values keeps one stack per distinct next character rather than one per value.
import { LlamaGrammar, LlamaJsonSchemaGrammar, LlamaText, type GbnfJsonBasicSchema, type Llama } from "node-llama-cpp";
import { factorLiteralAlternatives } from "./factorLiteralAlternatives.js";

/** node-llama-cpp's end of a JSON answer, which its own JSON schema grammar stops on. */
const JSON_ANSWER_END = "\n".repeat(4);

/** The GBNF text for `schema`, one readGrammarSchema accepted (only GbnfJsonSchema's forms); does not check its ambiguity. */
export function schemaGrammarText(llama: Llama, schema: unknown): string {
    return factorLiteralAlternatives(new LlamaJsonSchemaGrammar(llama, schema as GbnfJsonBasicSchema).grammar);
}

/** schemaGrammarText as a grammar, stopping and trimming as node-llama-cpp's LlamaJsonSchemaGrammar does. */
export function createSchemaGrammar(llama: Llama, schema: unknown): LlamaGrammar {
    return new LlamaGrammar(llama, {
        grammar: schemaGrammarText(llama, schema),
        stopGenerationTriggers: [LlamaText([JSON_ANSWER_END])],
        trimWhitespaceSuffix: true
    });
}
