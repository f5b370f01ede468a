// The chat wrapper's own tool-call syntax (node-llama-cpp's `settings.functions.call` and
// `parallelism`), as the host reads it in an answer's text: each piece tokenized as the template
// renders it and detokenized as the engine detokenizes an answer, so a special token the answer's
// text drops (Qwen's <tool_call>) is dropped here too, and the host matches what it will see.
import { LlamaText, type ChatWrapper, type LlamaModel, type Token } from "node-llama-cpp";
import type { ToolCallSyntax } from "../../contract/engineProtocol.js";

type Piece = string | LlamaText | undefined;

const read = new WeakMap<ChatWrapper, ToolCallSyntax | undefined>();

/** The wrapper's call syntax, read once per wrapper; undefined when it has none with a prefix that shows in text. */
export function readToolCallSyntax(wrapper: ChatWrapper, model: LlamaModel): ToolCallSyntax | undefined {
    if (read.has(wrapper)) {
        return read.get(wrapper);
    }
    const syntax = toolCallSyntaxOf(wrapper, (piece) =>
        model.detokenize(LlamaText(piece).tokenize(model.tokenizer, "trimLeadingSpace") as Token[])
    );
    read.set(wrapper, syntax);
    return syntax;
}

/** The syntax with each piece shown by `show` (the model's round trip through its tokenizer, or the piece's own text in unit tests). */
export function toolCallSyntaxOf(wrapper: ChatWrapper, show: (piece: string | LlamaText) => string): ToolCallSyntax | undefined {
    const functions = wrapper.settings.functions;
    const text = (piece: Piece): string => (piece === undefined || LlamaText(piece).values.length === 0 ? "" : show(piece));
    const prefixes = unique([functions.call.prefix, ...(functions.call.prefixAlternateMatches ?? [])].map(text));
    if (prefixes.length === 0) {
        return undefined;
    }
    const parallel = functions.parallelism?.call;
    return {
        prefixes,
        paramsPrefix: text(functions.call.paramsPrefix),
        suffix: text(functions.call.suffix),
        ...(parallel === undefined
            ? {}
            : {
                  parallel: {
                      sectionPrefixes: unique([parallel.sectionPrefix, ...(parallel.sectionPrefixAlternateMatches ?? [])].map(text), true),
                      betweenCalls: text(parallel.betweenCalls),
                      sectionSuffix: text(parallel.sectionSuffix)
                  }
              })
    };
}

/** Distinct pieces that show something once trimmed (a blank prefix would make every answer a call); `keepBlank` keeps one "" for a section with no prefix. */
function unique(pieces: readonly string[], keepBlank = false): string[] {
    const kept = [...new Set(pieces.filter((piece) => piece.trim() !== ""))];
    return keepBlank && pieces.some((piece) => piece.trim() === "") ? [...kept, ""] : kept;
}
