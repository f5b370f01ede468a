// llama-server parses every chat answer, and ends it with a 500 ("does not match the expected …
// format") at the first byte that is not valid UTF-8. A generated model's random weights pick
// tokens whose piece alone is part of a character (a byte token, or a merge holding half of one)
// as often as any other, so a test whose prompts it does not choose (the leak probe's markers)
// gets such 500s by chance. These are llama-server's `--logit-bias` flags against every token whose
// piece alone is not whole characters: its answers are then whole characters (a concatenation of
// valid UTF-8 is valid), and the probe judges the server, not its parser.
import { getLlama, LlamaLogLevel, type Token } from "node-llama-cpp";

export async function wholeCharacterBiasArgs(modelPath: string): Promise<string[]> {
    const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
    try {
        const model = await llama.loadModel({ modelPath, vocabOnly: true });
        const numTokens = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
        const args: string[] = [];
        for (let id = 0; id < numTokens; id++) {
            if (model.detokenize([id as Token]).includes("\uFFFD")) {
                args.push("--logit-bias", `${id}-100`);
            }
        }
        await model.dispose();
        return args;
    } finally {
        await llama.dispose();
    }
}
