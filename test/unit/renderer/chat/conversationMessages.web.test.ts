import { describe, expect, it } from "vitest";
import { conversationKey, conversationMessages } from "../../../../renderer/chat/conversationMessages.js";
import type { Workspace } from "../../../../renderer/workspaces/Workspace.js";

const workspace: Workspace = {
    id: "w",
    name: "W",
    colour: 0,
    settings: { systemPrompt: "", temperature: 0, maxTokens: 8 },
    messages: [
        { id: "m1", role: "user", content: "hi" },
        { id: "m2", role: "assistant", content: "hello", finish: "stop" }
    ]
};

describe("conversationMessages", () => {
    it("is the chat, with the system prompt first only when there is one", () => {
        expect(conversationMessages(workspace)).toEqual([
            { role: "user", content: "hi" },
            { role: "assistant", content: "hello" }
        ]);
        expect(conversationMessages({ ...workspace, settings: { ...workspace.settings, systemPrompt: "Be brief." } })[0]).toEqual({
            role: "system",
            content: "Be brief."
        });
        expect(conversationMessages({ ...workspace, settings: { ...workspace.settings, systemPrompt: "  " } })).toHaveLength(2);
    });

    it("has a key that changes with the messages and the system prompt, and only with them", () => {
        const key = conversationKey(workspace);
        expect(conversationKey({ ...workspace, name: "Renamed", settings: { ...workspace.settings, temperature: 1 } })).toBe(key);
        expect(conversationKey({ ...workspace, messages: workspace.messages.slice(0, 1) })).not.toBe(key);
        expect(conversationKey({ ...workspace, settings: { ...workspace.settings, systemPrompt: "x" } })).not.toBe(key);
    });
});
