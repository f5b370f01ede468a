import type { SamplingParams } from "../../contract/engineProtocol.js";
import type { MessageTiming } from "../../contract/workspaces.js";
import type { WorkspaceStore } from "../stores/workspaceStore.js";
import { newId } from "../util/newId.js";
import type { WorkspaceSettings } from "../workspaces/Workspace.js";

/**
 * Edit: a user message's new text becomes a new message beside it (the same parent), so the old
 * one and the answers after it stay as a branch. False when the message is not the user's, not
 * on the chat shown, or the text is empty or unchanged.
 */
export function editMessage(workspaces: WorkspaceStore, workspace: string, messageId: string, text: string): boolean {
    const messages = workspaces.getState().workspaces.find((item) => item.id === workspace)?.messages ?? [];
    const at = messages.findIndex((message) => message.id === messageId);
    const old = messages[at];
    if (old?.role !== "user" || text.trim() === "" || text === old.content) {
        return false;
    }
    workspaces.getState().appendMessage(workspace, {
        id: newId("m-"),
        role: "user",
        content: text,
        parent: messages[at - 1]?.id ?? null,
        at: Date.now()
    });
    return true;
}

/** What a turn samples with: the workspace's settings, each knob left out when the workspace does not set it (the engine's default). */
export function samplingOf(settings: WorkspaceSettings): SamplingParams {
    return {
        temperature: settings.temperature,
        maxTokens: settings.maxTokens,
        ...(settings.topP === undefined ? {} : { topP: settings.topP }),
        ...(settings.topK === undefined ? {} : { topK: settings.topK }),
        ...(settings.minP === undefined ? {} : { minP: settings.minP }),
        ...(settings.repeatPenalty === undefined ? {} : { repeatPenalty: settings.repeatPenalty }),
        ...(settings.seed === undefined ? {} : { seed: settings.seed }),
        ...(settings.stop === undefined || settings.stop.length === 0 ? {} : { stop: settings.stop })
    };
}

/** Tokens per second after the first token, for an answer's footer; undefined when it cannot be told (one token, or no time). */
export function tokensPerSecond(completionTokens: number, timing: MessageTiming): number | undefined {
    const decodeMs = timing.totalMs - timing.firstTokenMs;
    return completionTokens > 1 && decodeMs > 0 ? ((completionTokens - 1) * 1000) / decodeMs : undefined;
}
