import { describe, expect, it } from "vitest";
import { countResults } from "../../../.ci/countResults.mjs";

// The closing line of .ci/run counts tests as vitest does. Before, it added every failed file to the
// failed tests, so 7 failed tests in 4 files read as 11.
describe("countResults", () => {
    it("counts failed tests, not the files they are in", () => {
        const results = {
            numPassedTests: 40,
            numFailedTests: 7,
            testResults: [
                { status: "failed", assertionResults: [{ status: "failed" }, { status: "failed" }, { status: "passed" }] },
                { status: "failed", assertionResults: [{ status: "failed" }, { status: "failed" }, { status: "failed" }] },
                { status: "failed", assertionResults: [{ status: "failed" }] },
                { status: "failed", assertionResults: [{ status: "failed" }] },
                { status: "passed", assertionResults: [{ status: "passed" }] }
            ]
        };
        expect(countResults(results)).toEqual({ passed: 40, failed: 7 });
    });

    it("counts a file that failed before any of its tests ran as one failed test", () => {
        const results = {
            numPassedTests: 3,
            numFailedTests: 0,
            testResults: [
                { status: "failed", assertionResults: [] },
                { status: "failed", assertionResults: [{ status: "skipped" }, { status: "skipped" }] },
                { status: "passed", assertionResults: [{ status: "passed" }] }
            ]
        };
        expect(countResults(results)).toEqual({ passed: 3, failed: 2 });
    });
});
