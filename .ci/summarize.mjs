// Prints vitest's JSON results as the one closing line CI reads: "N passed, N failed".
import fs from "node:fs";

const [resultsPath] = process.argv.slice(2);
if (!fs.existsSync(resultsPath)) {
    // Lint or typecheck failed before any test ran.
    console.log("0 passed, 1 failed");
    process.exit(0);
}
const results = JSON.parse(fs.readFileSync(resultsPath, "utf8"));
const failed = results.numFailedTests + (results.numFailedTestSuites ?? 0);
console.log(`${results.numPassedTests} passed, ${failed} failed`);
