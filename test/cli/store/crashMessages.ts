// What the crash test's child writes, made again by the parent to check each message is intact.
import crypto from "node:crypto";
import type { StoredMessage } from "../../../contract/workspaces.js";

/** The workspace the child writes to. */
export const crashWorkspace = {
    id: "ui-crash",
    name: "Crash test",
    colour: 0,
    settings: { systemPrompt: "", temperature: 0, maxTokens: 16 }
} as const;

/** Every third message is big (characters): its line takes several write pages, so a kill can land inside its write. */
const BIG_CHARS = 3_000_000;
const MAX_SMALL_CHARS = 2_000;
const alphabet = 'abcdefghij ÄÖÜ é 🙂 \n"\\ 漢字';

export function isBigMessage(index: number): boolean {
    return index % 3 === 2;
}

/** Message `index`: its size and text follow from the index alone (multi-byte characters, quotes, newlines included). */
export function crashMessage(index: number): StoredMessage {
    const digest = crypto.createHash("sha256").update(String(index)).digest();
    const numChars = isBigMessage(index) ? BIG_CHARS - (digest.readUInt32BE(0) % 1_000) : 1 + (digest.readUInt32BE(0) % MAX_SMALL_CHARS);
    const chars = [...alphabet];
    const shift = index % chars.length;
    const content = [...chars.slice(shift), ...chars.slice(0, shift)]
        .join("")
        .repeat(Math.ceil(numChars / chars.length))
        .slice(0, numChars);
    return { id: `m-${index}`, role: index % 2 === 0 ? "user" : "assistant", content: `#${index} ${content}` };
}

/** The workspace name the metadata child writes at step `index`, with a system prompt of a size that varies. */
export function crashMeta(index: number) {
    const digest = crypto.createHash("sha256").update(`meta ${index}`).digest();
    return {
        ...crashWorkspace,
        name: `Version ${index}`,
        settings: { ...crashWorkspace.settings, systemPrompt: "p".repeat(digest.readUInt32BE(0) % 100_000) }
    };
}
