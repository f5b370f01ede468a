import { describe, expect, it } from "vitest";
import { TextStreamer } from "../../../engine/service/TextStreamer.js";

/** A fake detokenizer over a fixed piece table: token i is pieces[i]. */
const pieces = ["Hel", "lo", " wor", "ld", "\uFFFD", "é", "EN", "D!", "."];
const detokenize = (tokens: readonly number[]): string => {
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
});
