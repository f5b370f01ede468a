import { LlamaText, resolveChatWrapper, type ChatHistoryItem, type ChatWrapper, type LlamaModel, type Token } from "node-llama-cpp";
import type { ChatMessage, ToolDefinition } from "../../contract/engineProtocol.js";
import { KvaultError } from "../core/KvaultError.js";
import { tokenizeLlamaTextInSlices } from "./tokenizeInSlices.js";
import { availableFunctions, toChatHistory } from "./toolChatHistory.js";

/** Marks where an assistant answer sits in a rendered conversation; private-use code points no model emits in text. */
const ANSWER_SENTINEL = "\uE000kvault-answer\uE001";

export class ChatTemplateError extends KvaultError {
    readonly code = "chat_template_error";
}

/**
 * Turns a conversation into tokens through the model's own chat template (node-llama-cpp resolves
 * the wrapper from the GGUF metadata, as for a downloaded model).
 */
export class ChatRenderer {
    readonly wrapper: ChatWrapper;

    constructor(private readonly model: LlamaModel) {
        this.wrapper =
            resolveChatWrapper(model) ??
            (() => {
                throw new ChatTemplateError("The model has no chat template node-llama-cpp can use. Open a chat model (an instruct GGUF).");
            })();
    }

    /** The whole conversation, ready for the answer to be generated: BOS, every turn, the assistant's opening. */
    renderConversation(messages: readonly ChatMessage[], tools?: readonly ToolDefinition[]): number[] {
        return this.renderText(messages, tools).tokenize(this.model.tokenizer);
    }

    /**
     * renderConversation for a turn: the same tokens, with long messages tokenized in slices and the
     * event loop turned between them, so a multi-megabyte prompt does not hold other workspaces'
     * streams (tokenizeInSlices.ts).
     */
    tokenizeConversation(messages: readonly ChatMessage[], tools?: readonly ToolDefinition[]): Promise<number[]> {
        return tokenizeLlamaTextInSlices(this.renderText(messages, tools), this.model.tokenizer);
    }

    /**
     * The tokens that follow an assistant answer the engine generated itself: the template's end of
     * that answer, the next messages, the assistant's opening. The answer's own tokens are the
     * ones the engine sampled, so a conversation continues without retokenizing (and re-evaluating)
     * what the engine already holds. `answerIndex` is the index of that answer in `messages`. Long
     * messages are tokenized in slices, as in tokenizeConversation.
     */
    async renderContinuation(messages: readonly ChatMessage[], answerIndex: number): Promise<number[] | undefined> {
        const marked = messages.map((message, index) => (index === answerIndex ? { ...message, content: ANSWER_SENTINEL } : message));
        const values = this.renderText(marked).values;
        for (let index = 0; index < values.length; index++) {
            const value = values[index];
            if (typeof value !== "string" || !value.includes(ANSWER_SENTINEL)) {
                continue;
            }
            const after = value.slice(value.indexOf(ANSWER_SENTINEL) + ANSWER_SENTINEL.length);
            const rest = LlamaText([after, ...values.slice(index + 1)]);
            if (rest.values.some((item) => typeof item === "string" && item.includes(ANSWER_SENTINEL))) {
                return undefined;
            }
            return tokenizeLlamaTextInSlices(rest, this.model.tokenizer, "trimLeadingSpace");
        }
        return undefined; // a template that rewrites answers: the caller renders in full
    }

    /**
     * Tokens the draft message would add as the next user turn (for the context meter), tokenized
     * in slices as a turn's are: a multi-megabyte draft pasted into the composer holds no stream.
     */
    async measureDraft(
        messages: readonly ChatMessage[],
        draft: string
    ): Promise<{ readonly numConversationTokens: number; readonly numDraftTokens: number }> {
        const withoutDraft = await this.tokenizeConversation(messages.length === 0 ? [{ role: "user", content: "" }] : messages);
        const withDraft = await this.tokenizeConversation([...messages, { role: "user", content: draft }]);
        const numConversationTokens = messages.length === 0 ? 0 : withoutDraft.length;
        return { numConversationTokens, numDraftTokens: Math.max(0, withDraft.length - numConversationTokens) };
    }

    /** The text of `tokens`; with `previous`, as their continuation (a leading space decided by the tokens before). */
    detokenize(tokens: readonly number[], previous?: readonly number[]): string {
        return this.model.detokenize(tokens as Token[], false, previous as Token[] | undefined);
    }

    /**
     * One token's text and bytes, for logprobs. A byte-fallback token (`<0xE3>`) is one byte of a
     * multi-byte character: its bytes come from the vocabulary, its text alone is U+FFFD.
     */
    describeToken(token: number): { readonly text: string; readonly bytes: readonly number[] } {
        const text = this.model.detokenize([token as Token], true);
        const piece = this.#vocabulary?.[token];
        const byteFallback = typeof piece === "string" ? /^<0x([0-9A-Fa-f]{2})>$/.exec(piece) : null;
        return { text, bytes: byteFallback ? [parseInt(byteFallback[1]!, 16)] : [...Buffer.from(text, "utf8")] };
    }

    get #vocabulary(): readonly unknown[] | undefined {
        const tokens = (this.model.fileInfo.metadata.tokenizer as { ggml?: { tokens?: unknown } } | undefined)?.ggml?.tokens;
        return Array.isArray(tokens) ? tokens : undefined;
    }

    /** With tools (or tool calls in the history), rendered through toolChatHistory.ts in the template's tool format. */
    private renderText(messages: readonly ChatMessage[], tools?: readonly ToolDefinition[]): LlamaText {
        const chatHistory: ChatHistoryItem[] = toChatHistory(messages);
        return this.wrapper.generateContextState({ chatHistory, availableFunctions: availableFunctions(tools) }).contextText;
    }
}
