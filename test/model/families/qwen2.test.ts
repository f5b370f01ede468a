import { describeFamily } from "./familyModelSuite.js";

describeFamily({
    preset: "qwen2-tiny",
    quants: ["q8_0", "q4_0"],
    realModel: { name: "Qwen2.5 0.5B Instruct", fileName: "qwen2.5-0.5b-instruct-q8_0.gguf", chatWrapper: "QwenChatWrapper" },
    memory: { paged: true },
    specialTokens: ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>"]
});
