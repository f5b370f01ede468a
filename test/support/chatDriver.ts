import type { ChatMessage, SamplingParams } from "../../contract/engineProtocol.js";
import type { EngineService, TurnResult } from "../../engine/service/EngineService.js";

export const GREEDY: SamplingParams = { temperature: 0, maxTokens: 6 };

let numRequests = 0;

/** A workspace's conversation driven turn by turn, keeping its history as a host does. */
export class Conversation {
    readonly messages: ChatMessage[] = [];
    readonly answers: string[] = [];

    constructor(
        readonly workspace: string,
        private readonly sampling: SamplingParams = GREEDY
    ) {}

    async turn(service: EngineService, userText: string, signal?: AbortSignal): Promise<TurnResult> {
        const messages: ChatMessage[] = [...this.messages, { role: "user", content: userText }];
        const result = await service.chat(
            { requestId: `test-${++numRequests}`, workspace: this.workspace, messages, sampling: this.sampling },
            undefined,
            signal
        );
        this.messages.push({ role: "user", content: userText }, { role: "assistant", content: result.text });
        this.answers.push(result.text);
        return result;
    }
}

/** The user's message for turn `index` of workspace `name`: distinct per workspace and turn. */
export function userMessage(name: string, index: number): string {
    return `${name} asks question ${index}: how many pages hold ${index * 7} tokens?`;
}
