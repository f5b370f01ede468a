import type { SequenceSlot } from "../runtime/SequenceSlot.js";

/**
 * Prefix reuse: keeps the KV the workspace's sequence already holds for the longest prefix it
 * shares with `prompt`, never the prompt's last token (its logits give the first answer token, so
 * it is always evaluated), and drops the rest. Returns how many tokens it kept: none of them is
 * evaluated again.
 */
export async function reusePrefix(slot: SequenceSlot, prompt: readonly number[]): Promise<number> {
    const held = slot.tokens;
    let numReused = 0;
    while (numReused < held.length && numReused < prompt.length - 1 && held[numReused] === prompt[numReused]) {
        numReused++;
    }
    await slot.truncate(numReused);
    return numReused;
}
