// The peer benchmark's rows beyond the peer: many chats taking turns (each resends its whole
// conversation, so a server that keeps every chat's KV prefills only the new turn), and a chat
// resumed after a restart (Kvault's workspace keeps its KV on disk; llama-server reads it again).
import { median, percentile } from "../benchUtils.js";
import type { PeerPrompts } from "./peerPrompts.js";
import type { PeerServer } from "./PeerServer.js";
import { streamChat, type ChatMessage } from "./streamChat.js";

export const turnShape = {
    /** About 300 words of system prompt. */
    systemTokens: 400,
    /** About 60 new words a turn. */
    turnTokens: 80,
    answerTokens: 24,
    numTurns: Number(process.env.KVAULT_BENCH_ROUND_ROBIN_TURNS ?? 10),
    /** The history a resumed chat brings back. */
    resumeHistoryTokens: 4000,
    resumeTurnTokens: 60
} as const;

/** Every prompt length these rows ask PeerPrompts for, sized before its tokenizer stops. */
export const turnPromptLengths = (): readonly number[] => [
    turnShape.systemTokens,
    turnShape.turnTokens,
    turnShape.resumeHistoryTokens,
    turnShape.resumeTurnTokens
];

export interface RoundRobinFigures {
    readonly numWorkspaces: number;
    /** Time to first token of turns 2 and later, every workspace's, ms. */
    readonly ttftP50Ms: number;
    readonly ttftP95Ms: number;
    /** Prompt tokens each turn 2+ prefilled, as the server reported: median and p95. */
    readonly prefilledP50: number;
    readonly prefilledP95: number;
    /** New tokens of a turn: the last answer, the new message and the template around them, as the peer's tokenizer counts the message. */
    readonly newMessageTokens: number;
}

/**
 * `numWorkspaces` chats with one system prompt each (distinct, so nothing is shared), taking turns
 * one after another: every chat's turn 1, then every chat's turn 2, …; each turn resends the whole
 * conversation with the answers as the server gave them.
 */
export async function runRoundRobin(
    server: PeerServer,
    prompts: PeerPrompts,
    numWorkspaces: number,
    label: string
): Promise<RoundRobinFigures> {
    const { systemTokens, turnTokens, answerTokens, numTurns } = turnShape;
    const conversations: ChatMessage[][] = [];
    for (let index = 0; index < numWorkspaces; index++) {
        conversations.push([{ role: "system", content: await prompts.text(`${label} chat ${index}`, systemTokens) }]);
    }
    const ttfts: number[] = [];
    const prefilled: number[] = [];
    for (let turn = 0; turn < numTurns; turn++) {
        for (let index = 0; index < numWorkspaces; index++) {
            const conversation = conversations[index]!;
            conversation.push({ role: "user", content: await prompts.text(`Turn ${turn + 1} of chat ${index}`, turnTokens) });
            const timing = await streamChat(server, conversation, answerTokens, server.conversationFields(`rr-${label}-${index}`, index));
            conversation.push({ role: "assistant", content: timing.text });
            if (turn > 0) {
                ttfts.push(timing.ttftMs);
                prefilled.push(timing.numPrefilledTokens ?? Number.NaN);
            }
        }
    }
    return {
        numWorkspaces,
        ttftP50Ms: median(ttfts),
        ttftP95Ms: percentile(ttfts, 95),
        prefilledP50: median(prefilled),
        prefilledP95: percentile(prefilled, 95),
        newMessageTokens: turnTokens
    };
}

export interface ResumeFigures {
    /** The first turn after the restart: its time to first token, ms, and the prompt tokens the server evaluated for it. */
    readonly ttftMs: number;
    readonly numPrefilledTokens: number;
}

/**
 * A chat with a long history, its server restarted, then its next turn: `start` starts the server
 * (Kvault on the same data directory each time), `keep` are the headers that ask it to keep the
 * workspace's KV for the restart.
 */
export async function runResume(
    start: () => Promise<PeerServer>,
    prompts: PeerPrompts,
    label: string,
    keep: Record<string, string>
): Promise<ResumeFigures> {
    const { resumeHistoryTokens, resumeTurnTokens, answerTokens } = turnShape;
    const conversation: ChatMessage[] = [{ role: "user", content: await prompts.text(`${label} history`, resumeHistoryTokens) }];
    const first = await start();
    try {
        const answer = await streamChat(first, conversation, answerTokens, first.conversationFields(`resume-${label}`, 0), undefined, keep);
        conversation.push({ role: "assistant", content: answer.text });
    } finally {
        await first.stop();
    }
    conversation.push({ role: "user", content: await prompts.text(`${label} next`, resumeTurnTokens) });
    const second = await start();
    try {
        const timing = await streamChat(
            second,
            conversation,
            answerTokens,
            second.conversationFields(`resume-${label}`, 0),
            undefined,
            keep
        );
        return { ttftMs: timing.ttftMs, numPrefilledTokens: timing.numPrefilledTokens ?? Number.NaN };
    } finally {
        await second.stop();
    }
}
