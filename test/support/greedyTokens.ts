import type { SequenceSlot } from "../../engine/runtime/SequenceSlot.js";

/** The first `count` tokens a sequence generates after `tokens` at temperature 0. */
export async function greedyTokens(slot: SequenceSlot, tokens: readonly number[], count: number): Promise<number[]> {
    const out: number[] = [];
    for await (const token of slot.generate(tokens, { temperature: 0 })) {
        out.push(token);
        if (out.length >= count) {
            break;
        }
    }
    return out;
}
