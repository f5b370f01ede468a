// A SentencePiece-style ("llama") vocabulary: control tokens, the 256 byte-fallback tokens,
// "▁", printable ASCII, then filler pieces up to the preset's size. Every filler piece is an
// existing piece plus one letter, so llama.cpp's SPM bigram merges can reach each of them.

/** `tokenizer.ggml.token_type` values (llama.cpp `llama_token_type`). */
export const enum TokenType {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    Byte = 6
}

export const WORD_BOUNDARY = "\u2581"; // "▁", SentencePiece's marker for a preceding space

export const specialTokens = {
    unknown: { id: 0, text: "<unk>" },
    bos: { id: 1, text: "<s>" },
    eos: { id: 2, text: "</s>" },
    imStart: { id: 3, text: "<|im_start|>" },
    imEnd: { id: 4, text: "<|im_end|>" }
} as const;

export interface SyntheticVocabulary {
    readonly tokens: readonly string[];
    readonly scores: Float32Array;
    readonly tokenTypes: Int32Array;
}

/** Letters in rough English frequency order, so short common pieces come first. */
const LETTERS = "etaoinshrdlucmfwypvbgkjqxz";

/** Control tokens, byte-fallback tokens, "▁" and printable ASCII: what every size holds. */
const NUM_FIXED_PIECES = Object.keys(specialTokens).length + 256 + 1 + (0x7e - 0x21 + 1);

export function buildSyntheticVocabulary(vocabularySize: number): SyntheticVocabulary {
    if (!Number.isInteger(vocabularySize) || vocabularySize < NUM_FIXED_PIECES) {
        throw new RangeError(`A synthetic vocabulary needs at least ${NUM_FIXED_PIECES} tokens; ${vocabularySize} were asked for`);
    }
    const tokens: string[] = [];
    const types: number[] = [];
    const seen = new Set<string>();
    const add = (text: string, type: TokenType): boolean => {
        if (tokens.length >= vocabularySize || seen.has(text)) {
            return false;
        }
        seen.add(text);
        tokens.push(text);
        types.push(type);
        return true;
    };

    add(specialTokens.unknown.text, TokenType.Unknown);
    for (const special of [specialTokens.bos, specialTokens.eos, specialTokens.imStart, specialTokens.imEnd]) {
        add(special.text, TokenType.Control);
    }
    for (let byte = 0; byte < 256; byte++) {
        add(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`, TokenType.Byte);
    }
    add(WORD_BOUNDARY, TokenType.Normal);
    for (let code = 0x21; code <= 0x7e; code++) {
        add(String.fromCharCode(code), TokenType.Normal);
    }

    // Breadth-first: every piece of length n is a piece of length n - 1 plus one letter.
    let frontier = [WORD_BOUNDARY, ...LETTERS];
    while (tokens.length < vocabularySize) {
        const next: string[] = [];
        for (const prefix of frontier) {
            for (const letter of LETTERS) {
                const piece = prefix + letter;
                next.push(piece);
                if (!add(piece, TokenType.Normal) && tokens.length >= vocabularySize) {
                    break;
                }
            }
            if (tokens.length >= vocabularySize) {
                break;
            }
        }
        frontier = next;
    }

    // Scores are SentencePiece log-probabilities: earlier pieces are "more frequent" and merge first.
    const scores = new Float32Array(tokens.length);
    for (let id = 0; id < tokens.length; id++) {
        scores[id] = types[id] === TokenType.Normal ? -id : 0;
    }
    return { tokens, scores, tokenTypes: Int32Array.from(types) };
}
