// What the window says when no llama.cpp binary loads: from node-llama-cpp's own error, or from
// the tests main relayed, with each backend's last words and what to do.
import { describe, expect, it } from "vitest";
import type { BindingTestRecord } from "../../../../main/engine/BindingTestRelay.js";
import { NoUsableBinaryError, describeNoUsableBinary, explainStartFailure } from "../../../../main/engine/NoUsableBinaryError.js";

const test = (backend: string, outcome: BindingTestRecord["outcome"], output = "", exitCode: number | null = 1): BindingTestRecord => ({
    backend,
    binaryPath: `/bins/${backend}/llama-addon.node`,
    outcome,
    exitCode: outcome === "passed" ? 0 : exitCode,
    output
});
const startError = (detail: string): Error =>
    new Error(`The engine could not start: Loading the model failed (${detail}). Check that the file exists and is a GGUF model.`);

describe("explainStartFailure", () => {
    it("turns node-llama-cpp's NoBinaryFoundError into no_usable_binary, naming every backend tried", () => {
        const explained = explainStartFailure(startError("NoBinaryFoundError"), [
            test("cuda", "failed", "Error: libcuda.so.1: cannot open shared object file\n    at Module._load (node:internal)\n"),
            test("vulkan", "failed", "", null),
            test("cpu", "failed", "Illegal instruction")
        ]);
        expect(explained).toBeInstanceOf(NoUsableBinaryError);
        expect(explained).toMatchObject({ code: "no_usable_binary" });
        expect((explained as Error).message).toBe(
            "The engine could not start: no llama.cpp binary that Kvault carries loads on this computer. " +
                "Tried, in order: CUDA: its test process exited with code 1 (Error: libcuda.so.1: cannot open shared object file); " +
                "Vulkan: its test process was stopped; CPU: its test process exited with code 1 (Illegal instruction). " +
                "What to do: update or reinstall the GPU driver (a GPU binary needs its driver; the CPU one needs none), " +
                "reinstall Kvault (its installer carries this platform's binaries), and if that does not help, report this message with your " +
                "operating system, its version and your processor."
        );
    });

    it("says so when nothing was tried at all, and leaves out the driver advice when no GPU binary failed", () => {
        const explained = explainStartFailure(startError("NoBinaryFoundError"), []) as Error;
        expect(explained.message).toContain("node-llama-cpp found none to try");
        expect(explained.message).not.toContain("GPU driver");
        expect(describeNoUsableBinary([test("cpu", "failed")])).not.toContain("GPU driver");
    });

    it("leaves every other start failure as it was: a bad model is not a missing binary", () => {
        const badModel = startError("a tensor's data lies past the end of the file");
        expect(explainStartFailure(badModel, [test("cuda", "failed"), test("cpu", "passed")])).toBe(badModel);
        expect(explainStartFailure(badModel, [])).toBe(badModel);
        expect(explainStartFailure(badModel, [test("cpu", "running")])).toBe(badModel);
    });

    it("counts a start whose every finished test failed as no binary, whatever the engine's words", () => {
        expect(
            explainStartFailure(new Error("The engine process exited (exit code 1) before it was ready."), [test("cpu", "failed")])
        ).toMatchObject({
            code: "no_usable_binary"
        });
    });
});
