import type { Preset } from "../../contract/presets.js";

/**
 * The presets a new data directory starts with: common jobs with the sampler values llama.cpp's
 * users settle on for them. Once the presets file is written they are the user's to edit or delete.
 */
export const shippedPresets: readonly Preset[] = Object.freeze([
    {
        id: "shipped-assistant",
        name: "Helpful assistant",
        settings: {
            systemPrompt: "You are a helpful assistant. Answer clearly and briefly; say so when you are not sure.",
            temperature: 0.7,
            maxTokens: 1_024,
            topP: 0.95,
            topK: 40,
            minP: 0.05,
            repeatPenalty: 1.1
        }
    },
    {
        id: "shipped-coder",
        name: "Code helper",
        settings: {
            systemPrompt:
                "You are an expert programmer. Answer with working code in fenced blocks that name their language, then a short explanation.",
            temperature: 0.2,
            maxTokens: 2_048,
            topP: 0.9,
            topK: 20,
            minP: 0.1,
            repeatPenalty: 1.05
        }
    },
    {
        id: "shipped-summariser",
        name: "Summariser",
        settings: {
            systemPrompt:
                "Summarise the text you are given in at most five bullet points. Keep names, numbers and dates exactly as written.",
            temperature: 0.3,
            maxTokens: 512,
            topP: 0.9,
            topK: 40,
            minP: 0.05,
            repeatPenalty: 1.1
        }
    },
    {
        id: "shipped-writer",
        name: "Creative writer",
        settings: {
            systemPrompt: "You are a creative writer. Write vivid, original prose in the style the user asks for.",
            temperature: 1.1,
            maxTokens: 1_024,
            topP: 0.98,
            topK: 100,
            minP: 0.02,
            repeatPenalty: 1.05
        }
    }
]);
