import { describe, expect, it } from "vitest";
import type { Exchange } from "../../../probe/EndpointClient.js";
import { readAnswer } from "../../../probe/EndpointClient.js";
import type { SweepStep } from "../../../probe/probePlan.js";
import { judgeAsk, judgeCancelRace, judgeDivergence, judgeSweepStep, judgeTruncation, worstOf } from "../../../probe/probeVerdicts.js";

const A1 = "KV-PROBE-AAAAAAAAAAAA";
const A2 = "KV-PROBE-CCCCCCCCCCCC";
const answer = (text: string, extra: Partial<Exchange> = {}): Exchange => ({ status: 200, text, elapsedMs: 1, ...extra });
const refused = (status: number): Exchange => ({
    status,
    text: "",
    errorCode: "context_length_exceeded",
    errorMessage: "too long",
    elapsedMs: 1
});
const served: SweepStep = { label: "near the window", promptTokens: 450, expect: "served" };
const over: SweepStep = { label: "just over the window", promptTokens: 560, expect: "refused" };

describe("the window sweep's verdicts", () => {
    it("passes a 200 within the window and a 400 over it", () => {
        expect(judgeSweepStep(served, answer("x", { promptTokens: 460 }), 512).verdict).toBe("pass");
        expect(judgeSweepStep(over, refused(400), 512).verdict).toBe("pass");
    });

    it("finds a 200 where a 400 was due, and says when the server's own count shows truncation", () => {
        expect(judgeSweepStep(over, answer("x"), 512)).toEqual({
            verdict: "finding",
            reason: "just over the window: a 200 where a 400 was due: about 560 prompt tokens over a 512-token window were served"
        });
        expect(judgeSweepStep(over, answer("x", { promptTokens: 600 }), 512).verdict).toBe("finding");
        expect(judgeSweepStep(over, answer("x", { promptTokens: 300 }), 512).verdict).toBe("inconclusive");
        expect(judgeSweepStep(served, answer("x", { promptTokens: 100 }), 512)).toEqual({
            verdict: "finding",
            reason: "truncation: about 450 prompt tokens sent, the server counted 100"
        });
    });

    it("finds errors that are not 400, and cannot judge no answer or a rate limit", () => {
        expect(judgeSweepStep(over, refused(500), 512).verdict).toBe("finding");
        expect(judgeSweepStep(over, refused(413), 512).verdict).toBe("finding");
        expect(judgeSweepStep(served, refused(503), 512).verdict).toBe("finding");
        expect(judgeSweepStep(served, refused(400), 512).verdict).toBe("inconclusive");
        expect(judgeSweepStep(over, refused(429), 512).verdict).toBe("inconclusive");
        expect(judgeSweepStep(over, { status: 0, text: "", failure: "ECONNRESET", elapsedMs: 1 }, 512)).toEqual({
            verdict: "inconclusive",
            reason: "no answer (ECONNRESET): the step could not be judged"
        });
    });

    it("finds truncation when a short prompt's start marker is recalled and a longer one's is not", () => {
        const quarter: SweepStep = { label: "a quarter", promptTokens: 128, expect: "served" };
        expect(
            judgeTruncation([
                { step: quarter, exchange: answer(`It is ${A1}.`), startMarker: A1 },
                { step: served, exchange: answer("I do not know."), startMarker: A2 }
            ])
        ).toMatchObject({ verdict: "finding", reason: expect.stringContaining("recalled at 128 tokens and ignored at 450") });
        expect(
            judgeTruncation([
                { step: quarter, exchange: answer(A1), startMarker: A1 },
                { step: served, exchange: answer(A2), startMarker: A2 }
            ]).verdict
        ).toBe("pass");
        expect(judgeTruncation([{ step: quarter, exchange: answer("noise"), startMarker: A1 }]).verdict).toBe("inconclusive");
    });
});

describe("the identities' verdicts", () => {
    it("finds any of the other identity's markers in an answer", () => {
        expect(judgeAsk(answer(`The code was ${A2}`), [A1, A2])).toEqual({
            verdict: "finding",
            reason: `the answer contains the other identity's marker ${A2}`
        });
        expect(judgeAsk(answer("I was given no document."), [A1, A2]).verdict).toBe("pass");
        expect(judgeAsk(refused(500), [A1]).verdict).toBe("inconclusive");
        // A leak is a leak whatever the status says.
        expect(judgeAsk({ ...refused(500), text: A1 }, [A1]).verdict).toBe("finding");
    });

    it("finds B's long answers changing while its short ones hold, and cannot tell when the short ones vary too", () => {
        const same = [answer("s"), answer("s"), answer("s")];
        expect(judgeDivergence(same, [answer("l"), answer("l"), answer("l")]).verdict).toBe("pass");
        expect(judgeDivergence(same, [answer("l"), answer("l"), answer("m")])).toMatchObject({
            verdict: "finding",
            reason: expect.stringContaining("changed when A's document changed")
        });
        expect(judgeDivergence(same, [answer("l"), answer("m"), answer("n")])).toMatchObject({
            verdict: "finding",
            reason: expect.stringContaining("from run to run")
        });
        expect(judgeDivergence([answer("s"), answer("t"), answer("s")], [answer("l"), answer("m"), answer("n")]).verdict).toBe(
            "inconclusive"
        );
        expect(judgeDivergence(same, [answer("l"), refused(500), answer("l")]).verdict).toBe("inconclusive");
    });

    it("judges the cancel race by A's markers, and by B's answer against a repeatable baseline", () => {
        const cancelled = { status: 0, text: "", aborted: true, elapsedMs: 1 };
        expect(judgeCancelRace(cancelled, answer("l"), answer("l"), [A1]).verdict).toBe("pass");
        expect(judgeCancelRace(cancelled, answer("m"), answer("l"), [A1]).verdict).toBe("finding");
        expect(judgeCancelRace(cancelled, answer(`x ${A1}`), undefined, [A1]).verdict).toBe("finding");
        expect(judgeCancelRace(cancelled, answer("m"), undefined, [A1]).verdict).toBe("pass");
        expect(judgeCancelRace({ ...answer("done"), aborted: false }, answer("l"), answer("l"), [A1]).verdict).toBe("inconclusive");
    });

    it("takes the worst verdict with its reasons", () => {
        expect(worstOf([])).toEqual({ verdict: "pass", reason: "nothing to judge" });
        expect(
            worstOf([
                { verdict: "pass", reason: "a" },
                { verdict: "inconclusive", reason: "b" },
                { verdict: "finding", reason: "c" },
                { verdict: "finding", reason: "d" }
            ])
        ).toEqual({ verdict: "finding", reason: "c; d" });
    });
});

describe("reading an answer", () => {
    it("takes the text, the counts and the error of chat and completion bodies", () => {
        expect(
            readAnswer(200, { choices: [{ message: { content: "hi" } }], usage: { prompt_tokens: 9, completion_tokens: 2 } }, "chat")
        ).toEqual({ status: 200, text: "hi", promptTokens: 9, completionTokens: 2 });
        expect(readAnswer(200, { choices: [{ text: "go" }] }, "completions")).toEqual({ status: 200, text: "go" });
        expect(readAnswer(400, { error: { code: "context_length_exceeded", message: "too long" } }, "chat")).toMatchObject({
            errorCode: "context_length_exceeded",
            errorMessage: "too long"
        });
        expect(readAnswer(502, "Bad Gateway", "chat")).toMatchObject({ status: 502, text: "", errorMessage: "Bad Gateway" });
    });
});
