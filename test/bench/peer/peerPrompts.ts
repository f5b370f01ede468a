// Prompts of an exact token length for the peer benchmark, sized with llama-server's own tokenizer
// on the same GGUF (both servers tokenize with llama.cpp), distinct per conversation so that no
// server can serve one from another's cached prefix.
import { PROMPT_TEXT } from "../benchPrompt.js";
import type { PeerServer } from "./PeerServer.js";

export class PeerPrompts {
    readonly #cache = new Map<number, string>();

    constructor(private readonly tokenizer: PeerServer) {}

    /**
     * A user message of about `numTokens` tokens (± a few where the text is cut), starting with
     * `label`, which makes it distinct from every other prompt of the run.
     */
    async text(label: string, numTokens: number): Promise<string> {
        let body = this.#cache.get(numTokens);
        if (body === undefined) {
            body = await this.#body(numTokens);
            this.#cache.set(numTokens, body);
        }
        return `${label}. ${body}`;
    }

    async numTokens(text: string): Promise<number> {
        return (await this.#tokenize(text)).length;
    }

    async #body(numTokens: number): Promise<string> {
        let text = PROMPT_TEXT;
        let tokens = await this.#tokenize(text);
        while (tokens.length < numTokens) {
            text = `${text} ${PROMPT_TEXT}`;
            tokens = await this.#tokenize(text);
        }
        const response = await fetch(`${this.tokenizer.baseUrl}/detokenize`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ tokens: tokens.slice(0, numTokens) })
        });
        if (!response.ok) {
            throw new Error(`${this.tokenizer.name}'s /detokenize answered ${response.status}.`);
        }
        return ((await response.json()) as { content: string }).content;
    }

    async #tokenize(content: string): Promise<number[]> {
        const response = await fetch(`${this.tokenizer.baseUrl}/tokenize`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ content, add_special: false })
        });
        if (!response.ok) {
            throw new Error(`${this.tokenizer.name}'s /tokenize answered ${response.status}.`);
        }
        return ((await response.json()) as { tokens: number[] }).tokens;
    }
}
