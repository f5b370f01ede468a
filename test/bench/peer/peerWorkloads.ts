// The workloads of `npm run bench -- peer`, each run the same way against either server.
import { median, percentile } from "../benchUtils.js";
import type { PeerPrompts } from "./peerPrompts.js";
import type { PeerServer } from "./PeerServer.js";
import { streamChat, type ChatMessage, type ChatTiming } from "./streamChat.js";

export interface ConcurrentFigures {
    readonly numWorkspaces: number;
    /** Completion tokens of all answers over the wall time from the first request to the last token. */
    readonly tokensPerSecond: number;
    readonly ttftP50Ms: number;
    readonly ttftP99Ms: number;
}

export interface ArrivalFigures {
    /** The stream's median and p99 inter-token gap with nothing else running, ms. */
    readonly soloP50Ms: number;
    readonly soloP99Ms: number;
    /** The stream's worst and p99 gap while the long prompt arrived and was prefilled, ms. */
    readonly worstGapMs: number;
    readonly overlapP99Ms: number;
    readonly longPromptTtftMs: number;
}

export interface ChatFigures {
    /** Time to first token of each turn, ms. */
    readonly ttftMs: readonly number[];
}

export const workloadShape = {
    promptTokens: 470,
    answerTokens: 96,
    longPromptTokens: 1830,
    streamTokens: 200,
    /** The long prompt is sent once the stream has produced this many tokens. */
    arrivalAfterTokens: 16,
    chatTurns: 10,
    chatTurnTokens: 120,
    chatAnswerTokens: 32
} as const;

let numConversations = 0;
/** A label no other prompt of this process has: no server can reuse a cached prefix across requests. */
function freshLabel(): string {
    numConversations++;
    return `Conversation ${numConversations} of run ${process.pid}-${Date.now().toString(36)}`;
}

/** `numWorkspaces` conversations sent at once, each a distinct prompt. */
export async function runConcurrent(server: PeerServer, prompts: PeerPrompts, numWorkspaces: number): Promise<ConcurrentFigures> {
    const { promptTokens, answerTokens } = workloadShape;
    const messages = await Promise.all(
        Array.from(
            { length: numWorkspaces },
            async () => [{ role: "user", content: await prompts.text(freshLabel(), promptTokens) }] as const
        )
    );
    const startedAt = performance.now();
    const timings = await Promise.all(
        messages.map((conversation, slot) =>
            streamChat(server, conversation, answerTokens, server.conversationFields(`peer-${numConversations}-${slot}`, slot))
        )
    );
    const wallMs = Math.max(...timings.map((timing) => timing.sentAt + timing.totalMs)) - startedAt;
    const numTokens = timings.reduce((sum, timing) => sum + timing.numCompletionTokens, 0);
    const ttfts = timings.map((timing) => timing.ttftMs);
    return { numWorkspaces, tokensPerSecond: (numTokens * 1000) / wallMs, ttftP50Ms: median(ttfts), ttftP99Ms: percentile(ttfts, 99) };
}

/** One stream with nothing else running: its median and p99 inter-token gap, ms. */
export type SoloFigures = Pick<ArrivalFigures, "soloP50Ms" | "soloP99Ms">;

async function streamAlone(server: PeerServer, prompts: PeerPrompts): Promise<ChatTiming> {
    const { promptTokens, streamTokens } = workloadShape;
    return streamChat(
        server,
        [{ role: "user", content: await prompts.text(freshLabel(), promptTokens) }],
        streamTokens,
        server.conversationFields("peer-solo", 0)
    );
}

/** The stream-alone row by itself (KVAULT_PEER_ROWS=stream): the first half of `runArrival`. */
export async function runSolo(server: PeerServer, prompts: PeerPrompts): Promise<SoloFigures> {
    const solo = await streamAlone(server, prompts);
    return { soloP50Ms: percentile(solo.gapsMs, 50), soloP99Ms: percentile(solo.gapsMs, 99) };
}

/** A stream alone, then the same stream with a long prompt arriving beside it. */
export async function runArrival(server: PeerServer, prompts: PeerPrompts): Promise<ArrivalFigures> {
    const { promptTokens, streamTokens, longPromptTokens, arrivalAfterTokens } = workloadShape;
    const solo = await streamAlone(server, prompts);

    const streamMessages: ChatMessage[] = [{ role: "user", content: await prompts.text(freshLabel(), promptTokens) }];
    const longMessages: ChatMessage[] = [{ role: "user", content: await prompts.text(freshLabel(), longPromptTokens) }];
    let longTiming: Promise<ChatTiming> | undefined;
    let longSentAt = 0;
    const stream = streamChat(server, streamMessages, streamTokens, server.conversationFields("peer-stream", 0), (numTokens) => {
        if (numTokens === arrivalAfterTokens && longTiming === undefined) {
            longSentAt = performance.now();
            longTiming = streamChat(server, longMessages, 8, server.conversationFields("peer-long", 1));
        }
    });
    const streamed = await stream;
    if (longTiming === undefined) {
        throw new Error(`The stream ended after fewer than ${arrivalAfterTokens} tokens; the long prompt was never sent.`);
    }
    const long = await longTiming;
    // The gaps that overlap the long prompt's life, from its sending to its first token.
    const overlapStart = longSentAt - streamed.sentAt;
    const overlapEnd = overlapStart + long.ttftMs;
    const overlapping = streamed.gapsMs.filter((_gap, index) => {
        const at = streamed.arrivalsMs[index + 1]!;
        return at >= overlapStart && at - streamed.gapsMs[index]! <= overlapEnd;
    });
    const gaps = overlapping.length > 0 ? overlapping : streamed.gapsMs;
    return {
        soloP50Ms: percentile(solo.gapsMs, 50),
        soloP99Ms: percentile(solo.gapsMs, 99),
        worstGapMs: Math.max(...gaps),
        overlapP99Ms: percentile(gaps, 99),
        longPromptTtftMs: long.ttftMs
    };
}

/** One workspace, ten turns: each resends the whole conversation, so a server that keeps the prefix evaluates only the new turn. */
export async function runChat(server: PeerServer, prompts: PeerPrompts): Promise<ChatFigures> {
    const { chatTurns, chatTurnTokens, chatAnswerTokens } = workloadShape;
    const conversation: ChatMessage[] = [];
    const label = freshLabel();
    const ttftMs: number[] = [];
    for (let turn = 0; turn < chatTurns; turn++) {
        conversation.push({ role: "user", content: await prompts.text(`${label}, turn ${turn + 1}`, chatTurnTokens) });
        const timing = await streamChat(server, conversation, chatAnswerTokens, server.conversationFields(`peer-chat-${label}`, 0));
        ttftMs.push(timing.ttftMs);
        conversation.push({ role: "assistant", content: timing.text });
    }
    return { ttftMs };
}
