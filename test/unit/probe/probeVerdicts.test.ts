import { describe, expect, it } from "vitest";
import type { Exchange } from "../../../probe/EndpointClient.js";
import { readAnswer } from "../../../probe/EndpointClient.js";
import type { SweepStep } from "../../../probe/probePlan.js";
import {
    judgeAsk,
    judgeCancelRace,
    judgeDivergence,
    judgeSweepStep,
    judgeTruncation,
    logprobSpread,
    nearTieSplit,
    worstOf
} from "../../../probe/probeVerdicts.js";

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

    it("compares log-probabilities where the text held: a move beyond the short question's own is a finding", () => {
        const scored = (text: string, logprobs: number[]): Exchange =>
            answer(text, { scoredTokens: logprobs.map((logprob, index) => ({ token: `${text}${index}`, logprob })) });
        const short = [scored("s", [-1, -2]), scored("s", [-1, -2]), scored("s", [-1, -2])];
        // The 2026 configuration on the test's model: the text holds, the first token moves by 0.05.
        expect(judgeDivergence(short, [scored("l", [-3.8, -4.2]), scored("l", [-3.75, -4.2]), scored("l", [-3.8, -4.2])])).toMatchObject({
            verdict: "finding",
            reason: expect.stringMatching(/long prompt kept its text, but its tokens' log-probabilities moved by up to 0\.0500/)
        });
        expect(judgeDivergence(short, [scored("l", [-3.8, -4.2]), scored("l", [-3.8, -4.2]), scored("l", [-3.8, -4.2])])).toMatchObject({
            verdict: "pass",
            reason: expect.stringContaining("and their log-probabilities are the same")
        });
        // llama-server's own movement between a prompt evaluated whole and from its cache, and a
        // server whose short answers move as much as the long ones.
        expect(judgeDivergence(short, [scored("l", [-3.8]), scored("l", [-3.801]), scored("l", [-3.8])]).verdict).toBe("pass");
        const jittery = [scored("s", [-1]), scored("s", [-1.004]), scored("s", [-1])];
        expect(judgeDivergence(jittery, [scored("l", [-3.8]), scored("l", [-3.83]), scored("l", [-3.8])]).verdict).toBe("pass");
        expect(judgeDivergence(jittery, [scored("l", [-3.8]), scored("l", [-3.9]), scored("l", [-3.8])]).verdict).toBe("finding");
        // Without log-probabilities on every answer, the text decides alone and says so.
        expect(judgeDivergence(short, [scored("l", [-3.8]), answer("l"), scored("l", [-3.7])])).toMatchObject({
            verdict: "pass",
            reason: expect.stringContaining("no log-probabilities to compare")
        });
        expect(logprobSpread([scored("x", [-1, -2, -3]), scored("x", [-1.5, -2])])).toBe(0.5);
        expect(logprobSpread([scored("x", [-1, -2, -3]), scored("x", [-1, -3])], 1)).toBe(0);
        expect(logprobSpread([])).toBeUndefined();
    });

    it("passes long answers that part at a near tie after the same scores, and finds those that part otherwise", () => {
        const tokens = (...entries: [string, number, number][]): Exchange =>
            answer(entries.map(([token]) => token).join(""), {
                scoredTokens: entries.map(([token, logprob, runnerUp]) => ({ token, logprob, runnerUp }))
            });
        const short = [tokens(["s", -1, -2]), tokens(["s", -1, -2]), tokens(["s", -1, -2])];
        // llama-server on a random model: the top two 0.0004 apart at the second token, swapped by rounding.
        const tie = judgeDivergence(short, [
            tokens(["a", -10.8, -10.85], ["b", -10.8901, -10.8905]),
            tokens(["a", -10.8, -10.85], ["c", -10.8902, -10.8906]),
            tokens(["a", -10.8, -10.85], ["b", -10.8901, -10.8905])
        ]);
        expect(tie).toMatchObject({
            verdict: "pass",
            reason: expect.stringContaining("part at token 2, where the top two candidates were 0.000400 apart")
        });
        // Stale state: the scores before the split moved too.
        expect(
            judgeDivergence(short, [
                tokens(["a", -10.8, -10.85], ["b", -10.8901, -10.8905]),
                tokens(["a", -10.75, -10.85], ["c", -10.8902, -10.8906]),
                tokens(["a", -10.8, -10.85], ["b", -10.8901, -10.8905])
            ]).verdict
        ).toBe("finding");
        // A clear winner replaced: no tie.
        expect(
            judgeDivergence(short, [
                tokens(["a", -10.8, -10.85], ["b", -10.5, -10.9]),
                tokens(["a", -10.8, -10.85], ["c", -10.5, -10.9]),
                tokens(["a", -10.8, -10.85], ["b", -10.5, -10.9])
            ]).verdict
        ).toBe("finding");
        expect(nearTieSplit([answer("x"), answer("y")], 0.005)).toBeUndefined();
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

    it("takes the chosen tokens, their log-probabilities and the best alternative of chat and completion bodies", () => {
        const chat = {
            choices: [
                {
                    message: { content: "ab" },
                    logprobs: {
                        content: [
                            {
                                token: "a",
                                logprob: -0.5,
                                top_logprobs: [
                                    { token: "a", logprob: -0.5 },
                                    { token: "z", logprob: -0.75 }
                                ]
                            },
                            { token: "b", logprob: -1.25, top_logprobs: [] }
                        ]
                    }
                }
            ]
        };
        expect(readAnswer(200, chat, "chat").scoredTokens).toEqual([
            { token: "a", logprob: -0.5, runnerUp: -0.75 },
            { token: "b", logprob: -1.25 }
        ]);
        const completion = {
            choices: [
                { text: "ab", logprobs: { tokens: ["a", "b"], token_logprobs: [-0.5, -2], top_logprobs: [{ a: -0.5, y: -1 }, null] } }
            ]
        };
        expect(readAnswer(200, completion, "completions").scoredTokens).toEqual([
            { token: "a", logprob: -0.5, runnerUp: -1 },
            { token: "b", logprob: -2 }
        ]);
        expect(readAnswer(200, { choices: [{ message: { content: "a" }, logprobs: null }] }, "chat").scoredTokens).toBeUndefined();
        expect(
            readAnswer(200, { choices: [{ message: { content: "a" }, logprobs: { content: [{ token: "a", logprob: "x" }] } }] }, "chat")
                .scoredTokens
        ).toBeUndefined();
    });
});
