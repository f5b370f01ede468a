import crypto from "node:crypto";

/** What every probe marker begins with; the 12 random characters after it are what must never cross identities. */
export const PROBE_MARKER_PREFIX = "KV-PROBE-";

/** Characters after the prefix: 12 of a 32-letter alphabet, 60 random bits (no 0/O or 1/I, so a model cannot blur them). */
export const PROBE_MARKER_SECRET_CHARS = 12;

const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A new marker: the prefix and 12 characters drawn from `randomBytes` (the system's CSPRNG unless a test passes its own). */
export function makeMarker(randomBytes: (count: number) => Uint8Array = crypto.randomBytes): string {
    const bytes = randomBytes(PROBE_MARKER_SECRET_CHARS);
    let secret = "";
    for (const byte of bytes) {
        secret += ALPHABET[byte & 31];
    }
    return PROBE_MARKER_PREFIX + secret;
}

/**
 * The markers of `markers` that `text` gives away: the whole marker, or its secret alone with
 * any spacing, punctuation or case in between (a model may write "kv probe 7h…" or spell it out
 * with spaces). Sixty random bits: no answer contains one by chance.
 */
export function findMarkers(text: string, markers: readonly string[]): string[] {
    const squeezed = text.toUpperCase().replace(/[^A-Z0-9]/g, "");
    return markers.filter((marker) => squeezed.includes(secretOf(marker)));
}

export function secretOf(marker: string): string {
    return marker.startsWith(PROBE_MARKER_PREFIX)
        ? marker.slice(PROBE_MARKER_PREFIX.length)
        : marker.toUpperCase().replace(/[^A-Z0-9]/g, "");
}

// Plain, varied sentences: no marker-like runs, nothing a safety filter would refuse, and
// text whose tokens per character stay steady, so a length measured once predicts the rest.
const SENTENCES = [
    "The river bends twice before it reaches the old mill.",
    "A clerk counted the crates and wrote the total in a green ledger.",
    "Rain fell on the market square while the stalls were packed away.",
    "The second train left on time and the platform emptied quickly.",
    "She painted the fence blue because the hardware shop had no white.",
    "Three gulls argued over a crust of bread near the harbour wall.",
    "The library closes early on Thursdays during the winter months.",
    "A small boat drifted past the lighthouse with its sail half raised.",
    "He planted beans in April and tomatoes a few weeks after that.",
    "The committee met in the back room and agreed on nothing at all."
];

/** Filler of exactly `numChars` characters (sentences in a fixed order from `offset`, the last cut to fit). */
export function fillerText(numChars: number, offset = 0): string {
    let text = "";
    for (let index = offset; text.length < numChars; index += 1) {
        text += `${SENTENCES[index % SENTENCES.length]} `;
    }
    return text.slice(0, Math.max(0, numChars));
}

/** A document for the probe: `start` marker, filler, `end` marker, then the question. */
export function markedDocument(start: string, end: string, fillerChars: number, offset = 0): string {
    return `The code at the start is ${start}.\n${fillerText(fillerChars, offset)}\nThe code at the end is ${end}.`;
}
