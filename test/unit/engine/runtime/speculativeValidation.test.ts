import fs from "node:fs";
import { describe, expect, it } from "vitest";
import {
    fixSpeculativeValidation,
    installedLlamaContextFile,
    installedSpeculativeValidation,
    speculativeValidationFix,
    speculativeValidationState
} from "../../../../engine/runtime/speculationFix/speculativeValidation.js";

// The fix `npm install` applies to node-llama-cpp's speculative validation: on the installed file
// (npm ci ran the postinstall step), and on the same file without it.

const installed = fs.readFileSync(installedLlamaContextFile(), "utf8");
const fixLine = speculativeValidationFix.line.trim();
/** The installed file as node-llama-cpp ships it: the fix's line taken out again. */
const shipped = installed
    .split("\n")
    .filter((line) => line.trim() !== fixLine)
    .join("\n");

describe("the speculative validation fix", () => {
    it("is applied to the installed node-llama-cpp, once, after the accepted draft's line", () => {
        expect(installedSpeculativeValidation()).toBe("fixed");
        expect(installed.split(fixLine).length - 1).toBe(1);
        const lines = installed.split("\n");
        const at = lines.findIndex((line) => line.trim() === fixLine);
        expect(lines[at - 1]!.trim()).toBe(speculativeValidationFix.anchor.trim());
        // the array it fills is the one the check of the next draft reads
        expect(installed).toContain("validatedTokens.at(-1)?.[1]");
    });

    it("turns the shipped file into the installed one, and leaves a fixed file as it is", () => {
        expect(speculativeValidationState(shipped)).toBe("unfixed");
        expect(fixSpeculativeValidation(shipped)).toBe(installed);
        expect(fixSpeculativeValidation(installed)).toBe(installed);
    });

    it("refuses a file it does not know, rather than guessing where the line goes", () => {
        const moved = shipped.replace(speculativeValidationFix.anchor, "");
        expect(speculativeValidationState(moved)).toBe("unrecognized");
        expect(() => fixSpeculativeValidation(moved)).toThrow("is not the one the speculative validation fix knows");
        const twice = shipped.replace(speculativeValidationFix.anchor, speculativeValidationFix.anchor + speculativeValidationFix.anchor);
        expect(speculativeValidationState(twice)).toBe("unrecognized");
    });
});
