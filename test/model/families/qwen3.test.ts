import { describeFamily } from "./familyModelSuite.js";

describeFamily({
    preset: "qwen3-tiny",
    quants: ["q8_0", "q4_0"],
    realModel: { name: "Qwen3 0.6B", fileName: "Qwen3-0.6B-Q8_0.gguf", chatWrapper: "QwenChatWrapper" },
    memory: { paged: true },
    specialTokens: ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>"]
});
