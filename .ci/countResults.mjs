// Counts vitest's JSON results as vitest does: tests, not files. A file that failed with no test of its
// own failing (it did not load, or a hook failed before its tests ran) counts as one failed test, so a
// broken run never reads "0 failed".

/**
 * @param {{ numPassedTests: number, numFailedTests: number, testResults?: ReadonlyArray<{ status: string, assertionResults?: ReadonlyArray<{ status: string }> }> }} results
 * @returns {{ passed: number, failed: number }}
 */
export function countResults(results) {
    const failedFilesWithoutFailedTest = (results.testResults ?? []).filter(
        (file) => file.status === "failed" && !(file.assertionResults ?? []).some((test) => test.status === "failed")
    ).length;
    return { passed: results.numPassedTests, failed: results.numFailedTests + failedFilesWithoutFailedTest };
}
