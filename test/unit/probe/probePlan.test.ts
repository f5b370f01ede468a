import { describe, expect, it } from "vitest";
import { describeCost, estimateCost, planProbe, planSweep, ProbePlanError } from "../../../probe/probePlan.js";

describe("the sweep plan", () => {
    it("puts two prompts within the window, leaving room for the answer, and two across it", () => {
        const sweep = planSweep(8192, 32);
        expect(sweep.map((step) => [step.promptTokens, step.expect])).toEqual([
            [2048, "served"],
            [8192 - 32 - 246, "served"],
            [8192 + 820, "refused"],
            [12_288, "refused"]
        ]);
        for (const window of [64, 100, 512, 4096, 131_072, 1_000_000]) {
            const steps = planSweep(window, 8);
            const served = steps.filter((step) => step.expect === "served");
            const refused = steps.filter((step) => step.expect === "refused");
            expect(served.every((step) => step.promptTokens + 8 < window)).toBe(true);
            expect(refused.every((step) => step.promptTokens > window)).toBe(true);
            expect(served[0]!.promptTokens).toBeLessThan(served[1]!.promptTokens);
        }
    });

    it("refuses a window that leaves no room, with the numbers and what to do", () => {
        expect(() => planSweep(256, 200)).toThrow(ProbePlanError);
        expect(() => planSweep(256, 200)).toThrow(
            "A window of 256 tokens leaves no room for the sweep with --max-tokens 200: a prompt near the window would be 40 tokens, " +
                "not more than a quarter of it (64). Pass a smaller --max-tokens or check --window."
        );
        expect(() => planSweep(32, 1)).toThrow(ProbePlanError);
    });
});

describe("the probe plan and its cost", () => {
    it("lists every request of every probe, B's on its own identity", () => {
        const plan = planProbe(512, 32);
        const count = (probe: string, identity?: string): number =>
            plan.filter((request) => request.probe === probe && (identity === undefined || request.identity === identity)).length;
        expect(plan).toHaveLength(20);
        expect([count("calibration"), count("window-sweep"), count("recall", "B"), count("completion", "B")]).toEqual([2, 4, 1, 1]);
        expect([count("divergence", "A"), count("divergence", "B"), count("cancel-race", "A"), count("cancel-race", "B")]).toEqual([
            3, 6, 1, 2
        ]);
        expect(plan.filter((request) => request.stream)).toEqual([expect.objectContaining({ probe: "cancel-race", identity: "A" })]);
    });

    it("sums the prompt tokens and the most completion tokens the plan can cost", () => {
        const plan = planProbe(1000, 16);
        const cost = estimateCost(plan);
        expect(cost.numRequests).toBe(plan.length);
        expect(cost.promptTokens).toBe(plan.reduce((sum, request) => sum + request.promptTokens, 0));
        // A's calibration and divergence documents ask for one token each, everything else for 16.
        expect(cost.completionTokens).toBe(5 * 1 + (plan.length - 5) * 16);
        expect(describeCost({ numRequests: 20, promptTokens: 1_234_567, completionTokens: 300 })).toBe(
            "20 requests, about 1,234,567 prompt tokens and at most 300 completion tokens"
        );
    });
});
