// Plain JavaScript (types in speculativeValidation.d.ts): npm install's postinstall step runs it
// with node alone, before anything is built and where no devDependency (tsx) is installed.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * node-llama-cpp's speculative decoding (3.21.1, 3.22.1) accepts at most one drafted token a
 * step. `_speculativeEvaluate` checks the second and later drafts against
 * `validatedTokens.at(-1)`, an array it never fills, so every draft after the first is refuted
 * however right it was: a draft model identical to the model had 64 of 256 drafts accepted, 1 a
 * step. The fix is the line the code means: each accepted draft is recorded with the token the
 * model chose after it. `npm install` applies it (the postinstall script,
 * fixSpeculativeValidationCli.js); the engine refuses to speculate without it.
 */
export const speculativeValidationFix = Object.freeze({
    /** The file, beside node-llama-cpp's entry point (dist/index.js). */
    file: path.join("evaluator", "LlamaContext", "LlamaContext.js"),
    /** The accepted draft's line, after which the fix goes; once in the file. */
    anchor: "this._loadedTokenPredictions.push([evalTokens[i], [resultToken, probabilities, confidence]]);\n",
    /** The line added, marked so that a second run sees it. */
    line: "validatedTokens.push([evalTokens[i], resultToken]); // kvault: speculative validation fix\n"
});

/**
 * Whether a LlamaContext.js source has the fix, needs it, or is one the fix does not know.
 * @param {string} source
 * @returns {"fixed" | "unfixed" | "unrecognized"}
 */
export function speculativeValidationState(source) {
    if (source.includes(speculativeValidationFix.line.trim())) {
        return "fixed";
    }
    const anchors = source.split(speculativeValidationFix.anchor).length - 1;
    return anchors === 1 && source.includes("validatedTokens.at(-1)") ? "unfixed" : "unrecognized";
}

/**
 * The source with the fix, indented as the anchor line is; the same source when fixed already.
 * @param {string} source
 * @returns {string}
 */
export function fixSpeculativeValidation(source) {
    const state = speculativeValidationState(source);
    if (state === "fixed") {
        return source;
    }
    if (state === "unrecognized") {
        throw new Error(
            "node-llama-cpp's LlamaContext.js is not the one the speculative validation fix knows (its anchor line is missing, or is there more than once)"
        );
    }
    const at = source.indexOf(speculativeValidationFix.anchor);
    const lineStart = source.lastIndexOf("\n", at) + 1;
    const indent = source.slice(lineStart, at);
    const end = at + speculativeValidationFix.anchor.length;
    return source.slice(0, end) + indent + speculativeValidationFix.line + source.slice(end);
}

/**
 * The installed node-llama-cpp's LlamaContext.js.
 * @returns {string}
 */
export function installedLlamaContextFile() {
    // The package exports only dist/index.js (no ./package.json), so go from its entry point.
    const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
    return path.join(path.dirname(entry), speculativeValidationFix.file);
}

/** Whether the installed node-llama-cpp has the fix (read once per process: the file does not change under a running engine). */
export const installedSpeculativeValidation = (() => {
    /** @type {"fixed" | "unfixed" | "unrecognized" | undefined} */
    let state;
    return () => (state ??= speculativeValidationState(fs.readFileSync(installedLlamaContextFile(), "utf8")));
})();
