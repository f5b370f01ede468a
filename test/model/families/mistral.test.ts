import { describeFamily } from "./familyModelSuite.js";

// mistral-tiny is 256 wide, so its Q4_K file is Q4_K in every matrix.
describeFamily({
    preset: "mistral-tiny",
    quants: ["q8_0", "q4_0", "q4_k"],
    realModel: {
        name: "Mistral 7B Instruct v0.2",
        fileName: "mistral-7b-instruct-v0.2.Q4_K_M.gguf",
        chatWrapper: "JinjaTemplateChatWrapper"
    },
    memory: { paged: true },
    specialTokens: ["<s>", "</s>"]
});
