/**
 * Turns generated tokens into text as they come. A token can end inside a multi-byte character,
 * which detokenizes to U+FFFD until the next token completes it: such a tail is held back. Stop
 * strings end the answer before them; text that could still become a stop string is held back too.
 */
export class TextStreamer {
    readonly tokens: number[] = [];
    #emitted = 0;
    #stopped = false;

    constructor(
        private readonly detokenize: (tokens: readonly number[]) => string,
        private readonly stop: readonly string[]
    ) {}

    get stopped(): boolean {
        return this.#stopped;
    }

    /** Adds a token; returns the text that can be shown now (maybe empty). */
    push(token: number): string {
        this.tokens.push(token);
        const text = this.detokenize(this.tokens);
        for (const stop of this.stop) {
            const at = text.indexOf(stop);
            if (at >= 0) {
                this.#stopped = true;
                return this.#emitUpTo(text, at);
            }
        }
        let safeEnd = text.length;
        while (safeEnd > this.#emitted && text[safeEnd - 1] === "\uFFFD") {
            safeEnd--;
        }
        let holdBack = 0;
        for (const stop of this.stop) {
            for (let length = Math.min(stop.length - 1, safeEnd); length > holdBack; length--) {
                if (text.endsWith(stop.slice(0, length), safeEnd)) {
                    holdBack = length;
                    break;
                }
            }
        }
        return this.#emitUpTo(text, safeEnd - holdBack);
    }

    /** The whole answer: everything before a stop string, or all of it. */
    finish(): string {
        const text = this.detokenize(this.tokens);
        const cut = Math.min(...this.stop.map((stop) => text.indexOf(stop)).filter((at) => at >= 0), text.length);
        return text.slice(0, cut);
    }

    /** What `finish()` adds beyond what was streamed. */
    rest(): string {
        return this.finish().slice(this.#emitted);
    }

    #emitUpTo(text: string, end: number): string {
        if (end <= this.#emitted) {
            return "";
        }
        const chunk = text.slice(this.#emitted, end);
        this.#emitted = end;
        return chunk;
    }
}
