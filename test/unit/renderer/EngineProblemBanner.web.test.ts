// The window's engine banner: nothing while an engine serves, the host's whole reason when none does.
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { EngineProblemBanner, EngineProblemNotice } from "../../../renderer/EngineProblemBanner.js";

describe("EngineProblemBanner", () => {
    it("shows nothing while the engine serves", () => {
        expect(renderToStaticMarkup(createElement(EngineProblemBanner))).toBe("");
        expect(renderToStaticMarkup(createElement(EngineProblemNotice, { problem: undefined }))).toBe("");
    });

    it("says the engine is not running, and why, as an alert", () => {
        const problem = {
            code: "no_usable_binary",
            message: "Tried, in order: CUDA: its test process exited with code 1 (libcuda.so.1 <missing>)."
        };
        expect(renderToStaticMarkup(createElement(EngineProblemNotice, { problem }))).toBe(
            '<div class="engine-problem" role="alert" data-code="no_usable_binary"><strong>The engine is not running.</strong> ' +
                "Tried, in order: CUDA: its test process exited with code 1 (libcuda.so.1 &lt;missing&gt;).</div>"
        );
    });
});
