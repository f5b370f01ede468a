// A streamed response in the Responses API's events, each with its `sequence_number`:
// response.created and response.in_progress; for the answer's text a message item
// (output_item.added, content_part.added, output_text.delta…, output_text.done, content_part.done,
// output_item.done); for each call a function_call item (output_item.added, its arguments as one
// function_call_arguments.delta, .done, output_item.done); then response.completed (or
// response.incomplete at max_output_tokens). Written through the response's StreamWriter.
import type { ServerResponse } from "node:http";
import type { TurnUsage } from "../../../contract/engineProtocol.js";
import type { OpenAiError } from "../OpenAiError.js";
import type { StreamWriter } from "../StreamWriter.js";
import type { ApiToolCall } from "../toolCallAnswers.js";
import { functionCallItem, messageItem, newMessageItemId, outputText, type OutputItem } from "./responseBodies.js";

export class ResponsesStream {
    #sequenceNumber = 0;
    #started = false;
    /** The open message item's id and text so far; undefined while none is open. */
    #message: { readonly id: string; readonly outputIndex: number; text: string } | undefined;
    readonly #output: OutputItem[] = [];

    constructor(
        private readonly response: ServerResponse,
        private readonly writer: StreamWriter,
        /** The response object as it stands, for the events that carry it whole. */
        private readonly snapshot: (
            status: "in_progress" | "completed" | "incomplete",
            output: readonly OutputItem[],
            usage?: TurnUsage
        ) => Record<string, unknown>
    ) {}

    /** The items written so far, done. */
    get output(): readonly OutputItem[] {
        return this.#output;
    }

    /** Opens the stream with response.created and response.in_progress (once). */
    open(): void {
        if (this.#started) {
            return;
        }
        this.#started = true;
        this.response.writeHead(200, {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            Connection: "keep-alive"
        });
        this.#event("response.created", { response: this.snapshot("in_progress", []) });
        this.#event("response.in_progress", { response: this.snapshot("in_progress", []) });
    }

    text(delta: string): void {
        if (delta === "") {
            return;
        }
        const message = this.#openMessage();
        message.text += delta;
        this.#event("response.output_text.delta", {
            item_id: message.id,
            output_index: message.outputIndex,
            content_index: 0,
            delta,
            logprobs: []
        });
    }

    functionCalls(calls: readonly ApiToolCall[]): void {
        this.open();
        this.#closeMessage();
        for (const call of calls) {
            const outputIndex = this.#output.length;
            const done = functionCallItem(call, "completed");
            this.#event("response.output_item.added", { output_index: outputIndex, item: functionCallItem(call, "in_progress") });
            this.#event("response.function_call_arguments.delta", { item_id: done.id, output_index: outputIndex, delta: done.arguments });
            this.#event("response.function_call_arguments.done", {
                item_id: done.id,
                output_index: outputIndex,
                arguments: done.arguments
            });
            this.#output.push(done);
            this.#event("response.output_item.done", { output_index: outputIndex, item: done });
        }
    }

    /** Closes the message item (an answer with no output has one, empty) and ends the stream with the whole response. */
    finish(status: "completed" | "incomplete", usage: TurnUsage): void {
        if (this.#output.length === 0) {
            this.#openMessage();
        }
        this.#closeMessage();
        this.#event(status === "completed" ? "response.completed" : "response.incomplete", {
            response: this.snapshot(status, this.#output, usage)
        });
        this.response.end();
    }

    /** A failure once the stream has begun: an `error` event, and no response.completed. */
    fail(failure: OpenAiError): void {
        this.open();
        const body = {
            type: "error",
            code: failure.code,
            message: failure.message,
            param: failure.param,
            sequence_number: this.#sequenceNumber++
        };
        this.response.end(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    }

    #openMessage(): { readonly id: string; readonly outputIndex: number; text: string } {
        this.open();
        if (this.#message === undefined) {
            const id = newMessageItemId();
            this.#message = { id, outputIndex: this.#output.length, text: "" };
            this.#event("response.output_item.added", {
                output_index: this.#message.outputIndex,
                item: messageItem(id, undefined, "in_progress")
            });
            this.#event("response.content_part.added", {
                item_id: id,
                output_index: this.#message.outputIndex,
                content_index: 0,
                part: outputText("")
            });
        }
        return this.#message;
    }

    #closeMessage(): void {
        const message = this.#message;
        if (message === undefined) {
            return;
        }
        const where = { item_id: message.id, output_index: message.outputIndex, content_index: 0 };
        this.#event("response.output_text.done", { ...where, text: message.text, logprobs: [] });
        this.#event("response.content_part.done", { ...where, part: outputText(message.text) });
        const item = messageItem(message.id, message.text, "completed");
        this.#output.push(item);
        this.#event("response.output_item.done", { output_index: message.outputIndex, item });
        this.#message = undefined;
    }

    #event(type: string, body: Record<string, unknown>): void {
        void this.writer.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...body, sequence_number: this.#sequenceNumber++ })}\n\n`);
    }
}
