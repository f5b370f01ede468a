// Prints vitest's JSON results as the one closing line CI reads: "N passed, N failed".
import fs from "node:fs";
import { countResults } from "./countResults.mjs";

const [resultsPath] = process.argv.slice(2);
if (!fs.existsSync(resultsPath)) {
    // Lint or typecheck failed before any test ran.
    console.log("0 passed, 1 failed");
    process.exit(0);
}
const { passed, failed } = countResults(JSON.parse(fs.readFileSync(resultsPath, "utf8")));
console.log(`${passed} passed, ${failed} failed`);
