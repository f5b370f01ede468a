// A streamed Messages answer in Anthropic's event sequence: message_start, then per content block
// content_block_start (a ping after the first), its deltas (text_delta, or a tool_use's whole input
// as one input_json_delta) and content_block_stop, then message_delta with the stop reason and the
// usage, and message_stop. Written through the response's StreamWriter, so a client that does not
// read stops the turn rather than growing the host's buffers.
import type { ServerResponse } from "node:http";
import type { OpenAiError } from "../OpenAiError.js";
import type { StreamWriter } from "../StreamWriter.js";
import { anthropicErrorBody } from "./anthropicErrors.js";
import type { AnthropicMessageIdentity, AnthropicStopReason, AnthropicToolUse, AnthropicUsage } from "./anthropicBodies.js";
import { messageBody } from "./anthropicBodies.js";

export class AnthropicStream {
    #started = false;
    #numBlocks = 0;
    #textOpen = false;

    constructor(
        private readonly response: ServerResponse,
        private readonly writer: StreamWriter,
        private readonly identity: AnthropicMessageIdentity
    ) {}

    /** Text of the answer: into the open text block, or a new one. */
    text(text: string): void {
        if (text === "") {
            return;
        }
        if (!this.#textOpen) {
            this.#startBlock({ type: "text", text: "" });
            this.#textOpen = true;
        }
        this.#event("content_block_delta", { index: this.#numBlocks - 1, delta: { type: "text_delta", text } });
    }

    /** The answer's calls, each a tool_use block whose input arrives as one input_json_delta. */
    toolUses(calls: readonly AnthropicToolUse[]): void {
        this.#closeText();
        for (const call of calls) {
            this.#startBlock({ type: "tool_use", id: call.id, name: call.name, input: {} });
            this.#event("content_block_delta", {
                index: this.#numBlocks - 1,
                delta: { type: "input_json_delta", partial_json: JSON.stringify(call.input) }
            });
            this.#event("content_block_stop", { index: this.#numBlocks - 1 });
        }
    }

    /** Closes the last block (an answer with none has one empty text block, as Anthropic's has), then the message. */
    finish(stopReason: AnthropicStopReason, usage: AnthropicUsage): void {
        if (this.#numBlocks === 0) {
            this.#startBlock({ type: "text", text: "" });
            this.#textOpen = true;
        }
        this.#closeText();
        this.#event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
        this.#event("message_stop", {});
        this.response.end();
    }

    /** A failure once the stream has begun: Anthropic's `error` event, and no message_stop. */
    fail(failure: OpenAiError): void {
        this.#open();
        this.response.end(`event: error\ndata: ${JSON.stringify(anthropicErrorBody(failure))}\n\n`);
    }

    #startBlock(block: Record<string, unknown>): void {
        this.#event("content_block_start", { index: this.#numBlocks, content_block: block });
        this.#numBlocks += 1;
        if (this.#numBlocks === 1) {
            this.#event("ping", {});
        }
    }

    #closeText(): void {
        if (this.#textOpen) {
            this.#event("content_block_stop", { index: this.#numBlocks - 1 });
            this.#textOpen = false;
        }
    }

    #open(): void {
        if (this.#started || this.response.headersSent) {
            return;
        }
        this.#started = true;
        this.response.writeHead(200, {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            Connection: "keep-alive"
        });
        // the prompt's tokens are known once the turn ends: message_delta's usage carries them
        const message = messageBody(this.identity, [], null, { input_tokens: 0, output_tokens: 0 });
        this.#event("message_start", { message });
    }

    #event(type: string, body: Record<string, unknown>): void {
        this.#open();
        void this.writer.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`);
    }
}
