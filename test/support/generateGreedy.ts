import type { LlamaModel, Token } from "node-llama-cpp";

export interface GreedyGeneration {
    readonly promptTokens: readonly Token[];
    readonly tokens: readonly Token[];
    readonly text: string;
}

/**
 * The first vertical slice: tokenize `prompt`, evaluate it in a fresh one-sequence context and
 * take the argmax `maxTokens` times (or until an end-of-generation token). Temperature 0 makes the
 * result a pure function of the model, the prompt and the backend.
 */
export async function generateGreedy(model: LlamaModel, prompt: string, maxTokens: number, contextSize = 512): Promise<GreedyGeneration> {
    const promptTokens = model.tokenize(prompt);
    if (promptTokens.length + maxTokens > contextSize) {
        throw new RangeError(
            `The prompt needs ${promptTokens.length} tokens and ${maxTokens} more are asked for; the context holds ${contextSize}.`
        );
    }

    const context = await model.createContext({ contextSize, sequences: 1 });
    try {
        const sequence = context.getSequence();
        const tokens: Token[] = [];
        for await (const token of sequence.evaluate(promptTokens, { temperature: 0 })) {
            if (model.isEogToken(token)) {
                break;
            }
            tokens.push(token);
            if (tokens.length >= maxTokens) {
                break;
            }
        }
        return { promptTokens, tokens, text: model.detokenize(tokens) };
    } finally {
        await context.dispose();
    }
}
