import { describeFamily } from "./familyModelSuite.js";

// Gemma 3's five sliding-window layers to one global: llama.cpp keeps the windowed layers in a
// second KV cache (iSWA), which pages cannot hold; the engine runs it unified and says so.
describeFamily({
    preset: "gemma3-tiny",
    quants: ["q8_0", "q4_0"],
    realModel: { name: "Gemma 3 1b It", fileName: "gemma-3-1b-it-Q4_0.gguf", chatWrapper: "GemmaChatWrapper" },
    memory: {
        paged: false,
        reason: /^Running unified \(no prefill\/decode split\): the model uses sliding-window attention \(32 tokens\)/
    },
    specialTokens: ["<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"]
});
