import { SpecialToken, SpecialTokensText, type LlamaText, type Token, type Tokenizer } from "node-llama-cpp";

/**
 * Tokenizing a multi-megabyte prompt in one native call holds the engine's event loop for seconds
 * (docs/measurements.md), and with it every other workspace's stream: the decode loop
 * is JavaScript between native steps. So long runs of plain text are tokenized in slices, with a
 * turn of the event loop between them, and the tokens are the same as in one call.
 *
 * Why the same: a slice ends only at a cut where the tokenizers' own word splitting splits too,
 * and where that is seen to hold locally.
 * - The cut sits after a letter or digit and before a character that is neither a letter, a digit
 *   nor a combining mark (so never inside a character, a surrogate pair or a word). The BPE
 *   pre-tokenizers of llama.cpp (gpt-2, llama-bpe, qwen2, …) end a word there and start the next
 *   match at the cut whatever came before (no look-behind), so the words after the cut, and their
 *   merges, do not depend on the text before it.
 * - SentencePiece merges across a whole fragment, so each cut is also checked on the text around
 *   it: tokenizing `contextChars` on both sides in one call must give the two sides' tokens joined.
 *   A cut that fails the check is skipped for the next candidate.
 * - The text after a cut is tokenized as a continuation ("trimLeadingSpace": no added space prefix,
 *   no BOS), as LlamaText.tokenize does for the text after a special token.
 * A run with no acceptable cut within `maxSliceChars` (say, megabytes of CJK with no punctuation)
 * is tokenized in one call: correct first, then prompt. The tests compare against one call on real
 * vocabularies (test/model/engine/tokenizeInSlices.test.ts).
 */
export interface TokenizeInSlicesOptions {
    /** Characters per slice aimed at: few enough that a slice holds the loop for milliseconds (docs/measurements.md). */
    readonly sliceChars?: number;
    /** Characters either side of a cut for its local check. */
    readonly contextChars?: number;
    /** The farthest past `sliceChars` a cut is looked for before the rest is tokenized in one call. */
    readonly maxSliceChars?: number;
    /** A turn of the event loop between slices. */
    readonly yieldToEventLoop?: () => Promise<void>;
}

const DEFAULT_SLICE_CHARS = 16_384;
const DEFAULT_CONTEXT_CHARS = 64;

/** Letters, digits and combining marks: the characters a cut never sits before. */
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

export const yieldToEventLoop = (): Promise<void> =>
    new Promise((resolve) => {
        setImmediate(resolve);
    });

/** `text.tokenize(tokenizer, options)`, with long plain-text runs tokenized in slices (see above). */
export async function tokenizeLlamaTextInSlices(
    text: LlamaText,
    tokenizer: Tokenizer,
    leading?: "trimLeadingSpace",
    options: TokenizeInSlicesOptions = {}
): Promise<Token[]> {
    // The same walk as LlamaText.tokenize: plain text accumulates until a special token ends it.
    const tokens: Token[] = [];
    let pending = "";
    const hasContent = (): boolean => tokens.length > 0 || pending.length > 0;
    const flush = async (): Promise<void> => {
        const option = tokens.length > 0 ? "trimLeadingSpace" : leading;
        pushAll(tokens, await tokenizePlainTextInSlices(pending, tokenizer, option, options));
        pending = "";
    };
    for (const value of text.values) {
        if (value instanceof SpecialToken) {
            await flush();
            pushAll(tokens, value.tokenize(tokenizer));
        } else if (value instanceof SpecialTokensText) {
            const trim = hasContent() || leading === "trimLeadingSpace";
            await flush();
            pushAll(tokens, value.tokenize(tokenizer, trim));
        } else {
            pending += value;
        }
    }
    await flush();
    return tokens;
}

/** One run of plain text (no special tokens), as `tokenizer(text, false, leading)` gives it. */
export async function tokenizePlainTextInSlices(
    text: string,
    tokenizer: Tokenizer,
    leading: "trimLeadingSpace" | undefined,
    {
        sliceChars = DEFAULT_SLICE_CHARS,
        contextChars = DEFAULT_CONTEXT_CHARS,
        maxSliceChars = sliceChars * 4,
        yieldToEventLoop: pause = yieldToEventLoop
    }: TokenizeInSlicesOptions = {}
): Promise<Token[]> {
    const tokens: Token[] = [];
    let start = 0;
    let option = leading;
    while (text.length - start > sliceChars) {
        const cut = findCut(text, start + sliceChars, Math.min(text.length - contextChars, start + maxSliceChars), contextChars, tokenizer);
        if (cut === undefined) {
            break;
        }
        pushAll(tokens, tokenizer(text.slice(start, cut), false, option));
        option = "trimLeadingSpace";
        start = cut;
        await pause();
    }
    pushAll(tokens, tokenizer(text.slice(start), false, option));
    return tokens;
}

/** The first acceptable cut in [from, to), or undefined. */
function findCut(text: string, from: number, to: number, contextChars: number, tokenizer: Tokenizer): number | undefined {
    for (let cut = from; cut < to; cut++) {
        if (isWordEnd(text, cut) && splitsCleanly(text, cut, contextChars, tokenizer)) {
            return cut;
        }
    }
    return undefined;
}

/** After a letter or digit (a whole code point), before a character that is not one and not a mark. */
function isWordEnd(text: string, cut: number): boolean {
    const next = text.codePointAt(cut);
    if (next === undefined || (next >= 0xdc00 && next <= 0xdfff) || WORD_CHAR.test(String.fromCodePoint(next))) {
        return false;
    }
    const lastUnit = text.charCodeAt(cut - 1);
    const last = lastUnit >= 0xdc00 && lastUnit <= 0xdfff ? text.codePointAt(cut - 2) : lastUnit;
    return last !== undefined && /[\p{L}\p{N}]/u.test(String.fromCodePoint(last));
}

function splitsCleanly(text: string, cut: number, contextChars: number, tokenizer: Tokenizer): boolean {
    const left = text.slice(safeStart(text, cut - contextChars), cut);
    const right = text.slice(cut, cut + contextChars);
    const joined = tokenizer(left + right, false, "trimLeadingSpace");
    const apart = [...tokenizer(left, false, "trimLeadingSpace"), ...tokenizer(right, false, "trimLeadingSpace")];
    return joined.length === apart.length && joined.every((token, index) => token === apart[index]);
}

/** `index`, moved off the second half of a surrogate pair. */
function safeStart(text: string, index: number): number {
    const at = Math.max(0, index);
    const unit = text.charCodeAt(at);
    return unit >= 0xdc00 && unit <= 0xdfff ? at + 1 : at;
}

function pushAll(target: Token[], source: readonly Token[]): void {
    for (const token of source) {
        target.push(token);
    }
}
