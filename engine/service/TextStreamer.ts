/**
 * Detokenizes `tokens` as the continuation of `previous` (the tokens before them, maybe none):
 * node-llama-cpp's `detokenize(tokens, false, lastTokens)`, which decides a leading space and the
 * like from the tokens before.
 */
export type ContinuationDetokenizer = (tokens: readonly number[], previous: readonly number[]) => string;

/** How many settled tokens go with each detokenize call as context (node-llama-cpp reads at most its last few). */
const CONTEXT_TOKENS = 8;

/**
 * Turns generated tokens into text as they come. A token can end inside a multi-byte character,
 * which detokenizes to U+FFFD until the next token completes it: such a tail is held back. Stop
 * strings end the answer before them; text that could still become a stop string is held back too.
 *
 * Work per token is bounded by the unsettled tail, not the answer: tokens whose text is complete
 * (no U+FFFD at its end) are settled, and only the tokens after them are detokenized again, with
 * the last settled ones as context. Text already emitted is never searched again: a stop string
 * cannot begin inside it, since a possible start of one at its end is always held back.
 */
export class TextStreamer {
    readonly tokens: number[] = [];
    /** The chunks emitted so far, in order. */
    readonly #emitted: string[] = [];
    /** Tokens [0, #numSettled) have their final text: emitted, or in #pending. */
    #numSettled = 0;
    /** The settled text not yet emitted (held back as a possible start of a stop string). */
    #pending = "";
    /** How much of `#pending + tail text` was emitted while the tail was still unsettled. */
    #numEmittedBeyond = 0;
    #stopped = false;
    readonly #longestStop: number;

    constructor(
        private readonly detokenize: ContinuationDetokenizer,
        private readonly stop: readonly string[]
    ) {
        this.#longestStop = Math.max(0, ...stop.map((text) => text.length));
    }

    get stopped(): boolean {
        return this.#stopped;
    }

    /** Adds a token; returns the text that can be shown now (maybe empty). */
    push(token: number): string {
        this.tokens.push(token);
        const tail = this.#tailText();
        // everything not yet emitted: what #pending held back, then the tail's text
        const open = this.#pending + tail;
        const stopAt = this.#firstStop(open);
        if (stopAt !== undefined) {
            this.#stopped = true;
            return this.#emit(open, stopAt);
        }
        let safeEnd = open.length;
        while (safeEnd > this.#numEmittedBeyond && open[safeEnd - 1] === "\uFFFD") {
            safeEnd--;
        }
        let holdBack = 0;
        for (const stop of this.stop) {
            for (let length = Math.min(stop.length - 1, safeEnd); length > holdBack; length--) {
                if (open.endsWith(stop.slice(0, length), safeEnd)) {
                    holdBack = length;
                    break;
                }
            }
        }
        const chunk = this.#emit(open, safeEnd - holdBack);
        if (!tail.endsWith("\uFFFD")) {
            // the tail's text is complete: settle it, keeping only what is not yet emitted
            this.#pending = open.slice(this.#numEmittedBeyond);
            this.#numEmittedBeyond = 0;
            this.#numSettled = this.tokens.length;
        }
        return chunk;
    }

    /** The whole answer: everything before a stop string, or all of it. */
    finish(): string {
        return this.#emitted.join("") + this.rest();
    }

    /** What `finish()` adds beyond what was streamed. */
    rest(): string {
        const open = (this.#pending + this.#tailText()).slice(this.#numEmittedBeyond);
        const stopAt = this.#firstStop(open);
        return stopAt === undefined ? open : open.slice(0, stopAt);
    }

    #tailText(): string {
        const previous = this.tokens.slice(Math.max(0, this.#numSettled - CONTEXT_TOKENS), this.#numSettled);
        return this.#numSettled === this.tokens.length ? "" : this.detokenize(this.tokens.slice(this.#numSettled), previous);
    }

    /** Where the first stop string begins in `open`, at or after what was already emitted of it. */
    #firstStop(open: string): number | undefined {
        if (this.#longestStop === 0) {
            return undefined;
        }
        const found = this.stop.map((stop) => open.indexOf(stop, this.#numEmittedBeyond)).filter((at) => at >= 0);
        return found.length === 0 ? undefined : Math.min(...found);
    }

    /** Emits `open` from what was emitted of it up to `end`. */
    #emit(open: string, end: number): string {
        if (end <= this.#numEmittedBeyond) {
            return "";
        }
        const chunk = open.slice(this.#numEmittedBeyond, end);
        this.#numEmittedBeyond = end;
        this.#emitted.push(chunk);
        return chunk;
    }
}
