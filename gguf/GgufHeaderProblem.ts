/**
 * What is wrong with a GGUF header, before it is known which file it came from: readGgufHeader
 * turns it into model_unreadable (damaged or cut short) or model_unsupported (well formed, but
 * nothing llama.cpp can load), with the file's path and what to do.
 */
export class GgufHeaderProblem extends Error {
    constructor(
        readonly kind: "unreadable" | "unsupported",
        /** A clause with the numbers: "metadata entry 3 of 24 (tokenizer.ggml.tokens) claims 1,099,511,627,776 elements of 4 bytes; …". */
        readonly detail: string
    ) {
        super(detail);
        this.name = "GgufHeaderProblem";
    }
}

/** 1099511627776 → "1,099,511,627,776", for numbers and bigints alike. */
export function formatCount(value: number | bigint): string {
    return value.toLocaleString("en-US");
}
