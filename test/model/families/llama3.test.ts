import { describeFamily } from "./familyModelSuite.js";

describeFamily({
    preset: "llama3-tiny",
    quants: ["q8_0", "q4_0"],
    realModel: {
        name: "Llama 3.2 1B Instruct",
        fileName: "Llama-3.2-1B-Instruct-Q8_0.gguf",
        chatWrapper: "Llama3_2LightweightChatWrapper"
    },
    memory: { paged: true },
    specialTokens: ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"]
});
