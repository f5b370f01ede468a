// Pure: what the window says when node-llama-cpp found no llama.cpp binary that loads on this
// machine, built from the binding tests main relayed for the engine (BindingTestRelay).
import { KvaultError } from "../../engine/index.js";
import type { BindingTestRecord } from "./BindingTestRelay.js";

/** No llama.cpp binary Kvault carries loads here; the engine was not started. */
export class NoUsableBinaryError extends KvaultError {
    readonly code = "no_usable_binary";
}

const BACKEND_NAMES: Readonly<Record<string, string>> = { cuda: "CUDA", vulkan: "Vulkan", metal: "Metal", cpu: "CPU" };
/** node-llama-cpp's own word for it (dist/bindings/utils/NoBinaryFoundError.js), inside the engine's start error. */
const NO_BINARY_FOUND = /NoBinaryFoundError|No prebuilt binar/;

/**
 * The engine's start error, as the user should read it: a NoUsableBinaryError when node-llama-cpp
 * found no binary (it says so), or when every binary tested in this start failed its test;
 * otherwise `error` unchanged. `tests` are the tests relayed since this start began.
 */
export function explainStartFailure(error: unknown, tests: readonly BindingTestRecord[]): unknown {
    const message = error instanceof Error ? error.message : String(error);
    const finished = tests.filter((test) => test.outcome !== "running");
    const allFailed = finished.length > 0 && finished.every((test) => test.outcome === "failed");
    if (!NO_BINARY_FOUND.test(message) && !allFailed) {
        return error;
    }
    return new NoUsableBinaryError(describeNoUsableBinary(finished), { cause: error });
}

/** What was tried, in the order node-llama-cpp tried it, each with its last words, and what to do. */
export function describeNoUsableBinary(tests: readonly BindingTestRecord[]): string {
    const tried =
        tests.length === 0
            ? "node-llama-cpp found none to try (none is installed for this platform and architecture, or its test could not run)."
            : `Tried, in order: ${tests.map(describeTest).join("; ")}.`;
    const gpuFailed = tests.some((test) => test.backend !== "cpu" && test.backend !== "unknown");
    return [
        "The engine could not start: no llama.cpp binary that Kvault carries loads on this computer.",
        tried,
        "What to do:",
        gpuFailed ? "update or reinstall the GPU driver (a GPU binary needs its driver; the CPU one needs none)," : undefined,
        "reinstall Kvault (its installer carries this platform's binaries), and if that does not help, report this message with your",
        "operating system, its version and your processor."
    ]
        .filter((line) => line !== undefined)
        .join(" ");
}

function describeTest(test: BindingTestRecord): string {
    const name = BACKEND_NAMES[test.backend] ?? test.backend;
    const lastLine = test.output
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "" && !line.startsWith("at "))
        .at(-1);
    const exit = test.exitCode === null ? "was stopped" : `exited with code ${test.exitCode}`;
    return `${name}: its test process ${exit}${lastLine === undefined ? "" : ` (${lastLine.slice(0, 300)})`}`;
}
