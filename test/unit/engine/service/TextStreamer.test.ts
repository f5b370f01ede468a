import { describe, expect, it } from "vitest";
import { TextStreamer } from "../../../../engine/service/TextStreamer.js";

/** A fake detokenizer over a fixed piece table: token i is pieces[i] (the tokens before do not change it). */
const pieces = ["Hel", "lo", " wor", "ld", "\uFFFD", "é", "EN", "D!", "."];
const detokenize = (tokens: readonly number[], _previous: readonly number[] = []): string => {
    // Token 4 alone is half a character: it shows as U+FFFD until token 5 completes it as "é".
    let text = "";
    tokens.forEach((token, index) => {
        if (token === 4) {
            text += tokens[index + 1] === 5 ? "" : "\uFFFD";
        } else {
            text += pieces[token];
        }
    });
    return text;
};

describe("TextStreamer", () => {
    it("streams text as tokens come, and the chunks add up to the answer", () => {
        const streamer = new TextStreamer(detokenize, []);
        const chunks = [0, 1, 2, 3].map((token) => streamer.push(token));
        expect(chunks).toEqual(["Hel", "lo", " wor", "ld"]);
        expect(streamer.finish()).toBe("Hello world");
        expect(streamer.rest()).toBe("");
    });

    it("holds back half a multi-byte character until it is complete", () => {
        const streamer = new TextStreamer(detokenize, []);
        expect(streamer.push(0)).toBe("Hel");
        expect(streamer.push(4)).toBe("");
        expect(streamer.push(5)).toBe("é");
    });

    it("ends before a stop string, holding back a possible start of it", () => {
        const streamer = new TextStreamer(detokenize, ["END!"]);
        expect(streamer.push(0)).toBe("Hel");
        expect(streamer.push(6)).toBe(""); // "EN" may be the start of "END!"
        expect(streamer.stopped).toBe(false);
        expect(streamer.push(7)).toBe("");
        expect(streamer.stopped).toBe(true);
        expect(streamer.finish()).toBe("Hel");
    });

    it("releases held-back text that turned out not to be a stop string", () => {
        const streamer = new TextStreamer(detokenize, ["END!"]);
        streamer.push(6);
        expect(streamer.push(8)).toBe("EN.");
        expect(streamer.rest()).toBe("");
    });

    it("detokenizes only the tokens since the last complete character, whatever the answer's length", () => {
        const calls: { tokens: number; previous: number }[] = [];
        const streamer = new TextStreamer(
            (tokens, previous) => {
                calls.push({ tokens: tokens.length, previous: previous.length });
                return detokenize(tokens, previous);
            },
            ["END!"]
        );
        const answer = [...Array.from({ length: 500 }, (_, index) => index % 4), 0, 4, 5, 6, 8];
        const chunks = answer.map((token) => streamer.push(token));
        expect(chunks.join("") + streamer.rest()).toBe(detokenize(answer));
        // one token per call, but two while "é" is half done; the context is at most 8 tokens
        expect(Math.max(...calls.map((call) => call.tokens))).toBe(2);
        expect(Math.max(...calls.map((call) => call.previous))).toBe(8);
        expect(calls.length).toBe(answer.length); // rest() has no unsettled tokens to ask about
    });
});
