import type { FinishReason, TurnUsage } from "../../contract/engineProtocol";
import type { WorkspaceColour } from "./workspacePalette";

export interface WorkspaceSettings {
    /** Sent as the first message when not empty. */
    readonly systemPrompt: string;
    /** 0 is greedy. */
    readonly temperature: number;
    /** Tokens to generate at most per answer. */
    readonly maxTokens: number;
}

/** One message of a workspace's chat. Only the user's messages and whole answers are stored: never an error. */
export interface StoredMessage {
    readonly id: string;
    readonly role: "user" | "assistant";
    readonly content: string;
    /** How an answer ended: the model's own stop, its length limit, or the user's Stop. */
    readonly finish?: FinishReason | "stopped";
    readonly usage?: TurnUsage;
}

/** A chat with its own settings and, in the engine, its own isolated KV (the id is the engine's workspace). */
export interface Workspace {
    readonly id: string;
    readonly name: string;
    readonly colour: WorkspaceColour;
    readonly settings: WorkspaceSettings;
    readonly messages: readonly StoredMessage[];
}
