// The postinstall step: applies the speculative validation fix to the installed node-llama-cpp
// (speculativeValidation.js says what it fixes). Idempotent. A node-llama-cpp the fix does not
// know is left as it is, with a warning: installing never fails for it, and the engine then
// refuses speculative decoding, saying why, while everything else works. Plain JavaScript, run
// with node alone: `npm ci --omit=dev` installs no tsx.
import fs from "node:fs";
import { fixSpeculativeValidation, installedLlamaContextFile, speculativeValidationState } from "./speculativeValidation.js";

const file = installedLlamaContextFile();
const source = fs.readFileSync(file, "utf8");
const state = speculativeValidationState(source);
if (state === "unfixed") {
    fs.writeFileSync(file, fixSpeculativeValidation(source));
    console.log(`kvault: applied the speculative validation fix to ${file}`);
} else if (state === "unrecognized") {
    console.warn(`kvault: ${file} is not the one the speculative validation fix knows; speculative decoding stays off until it is`);
}
