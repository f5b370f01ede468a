import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatMLChatWrapper, resolveChatWrapper, type LlamaModel } from "node-llama-cpp";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { generatedModelPath } from "../support/generatedModels.js";

describe("the chat template in a generated model's metadata", () => {
    let runtime: LlamaRuntime;
    let model: LlamaModel;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        model = await runtime.loadModel(generatedModelPath("tiny"));
    });
    afterAll(async () => {
        await model.dispose();
        await runtime.dispose();
    });

    it("resolves to node-llama-cpp's ChatML wrapper, as a real ChatML model does", () => {
        const wrapper = resolveChatWrapper(model);
        expect(wrapper).toBeInstanceOf(ChatMLChatWrapper);
    });

    it("renders a conversation with the template's special tokens as single control tokens", () => {
        const wrapper = resolveChatWrapper(model)!;
        const { contextText } = wrapper.generateContextState({
            chatHistory: [
                { type: "system", text: "Be brief." },
                { type: "user", text: "hello" },
                { type: "model", response: [] }
            ]
        });
        const tokens = contextText.tokenize(model.tokenizer);
        const imStart = model.tokenize("<|im_start|>", true);
        expect(imStart).toEqual([3]);
        expect(tokens.filter((token) => token === 3)).toHaveLength(3);
        expect(contextText.toString()).toContain("hello");
    });
});
