import { describeFamily } from "./familyModelSuite.js";

// Phi-3 mini 4k's file says sliding_window 2047; llama.cpp's phi3 graph does not use it, so pages hold its KV.
describeFamily({
    preset: "phi3-tiny",
    quants: ["q8_0", "q4_0"],
    realModel: { name: "Phi 3 Mini 4k Instruct", fileName: "Phi-3-mini-4k-instruct-q4.gguf", chatWrapper: "JinjaTemplateChatWrapper" },
    memory: { paged: true },
    specialTokens: ["<s>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>", "<|endoftext|>"]
});
