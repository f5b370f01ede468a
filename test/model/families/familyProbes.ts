import fs from "node:fs";
import type { LlamaModel, Token } from "node-llama-cpp";
import { llamaCppAsset } from "../../../synthetic/model/llamaCppAssets.js";

/** llama.cpp's separator between test inputs in models/ggml-vocab-*.gguf.inp (tests/test-tokenizer-0.cpp). */
const TEST_SEPARATOR = "\n__ggml_vocab_test__\n";

/**
 * The tokenizer test cases llama.cpp keeps beside a vocabulary file: inputs (`.inp`) and the token
 * ids the model's own Hugging Face tokenizer gives them (`.out`), tokenized without special tokens.
 */
export function tokenizerTestCases(vocabularyFile: string): { readonly text: string; readonly tokens: Token[] }[] {
    const inputs = fs.readFileSync(llamaCppAsset(`${vocabularyFile}.inp`), "utf8").split(TEST_SEPARATOR);
    const outputs = fs.readFileSync(llamaCppAsset(`${vocabularyFile}.out`), "utf8").split("\n");
    if (inputs.at(-1) === "") {
        inputs.pop(); // the file ends with a separator
    }
    return inputs.map((text, index) => ({
        text,
        tokens: (outputs[index] ?? "")
            .trim()
            .split(/\s+/)
            .filter((id) => id !== "")
            .map((id) => Number(id) as Token)
    }));
}

/**
 * The probability of every next token after each of the `numPositions` last positions of `tokens`,
 * likeliest first, from one fresh context (a full distribution is a vocabulary-sized map: a few
 * positions keep it cheap). node-llama-cpp's own maps, unconverted: a comparison takes the logarithm
 * of the few entries it reads, not of the whole vocabulary's.
 */
export async function nextTokenProbabilities(
    model: LlamaModel,
    tokens: readonly number[],
    numPositions = 8
): Promise<ReadonlyMap<number, number>[]> {
    const context = await model.createContext({ contextSize: 256, sequences: 1, flashAttention: true });
    const firstProbed = tokens.length - numPositions;
    try {
        const evaluated = await context
            .getSequence()
            .controlledEvaluate(
                tokens.map((token, index) =>
                    index >= firstProbed ? [token as Token, { generateNext: { probabilities: true } }] : (token as Token)
                )
            );
        return evaluated.slice(firstProbed).map((output, index) => {
            const probabilities = output?.next?.probabilities;
            if (probabilities === undefined) {
                throw new Error(`no probabilities after position ${firstProbed + index}`);
            }
            return probabilities;
        });
    } finally {
        await context.dispose();
    }
}

/** The largest |Δ log p| over each position's `top` likeliest tokens under `a` (maps of probabilities, likeliest first). */
export function maxLogprobDifference(
    a: readonly ReadonlyMap<number, number>[],
    b: readonly ReadonlyMap<number, number>[],
    top = 50
): number {
    let largest = 0;
    a.forEach((position, index) => {
        let count = 0;
        for (const [token, probability] of position) {
            if (count++ === top) {
                break;
            }
            largest = Math.max(largest, Math.abs(Math.log(probability) - Math.log(b[index]!.get(token) ?? 0)));
        }
    });
    return largest;
}
