import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repositoryRoot } from "../../../support/generatedModels.js";

/** Runs `body` in a fresh Node process with the hook installed; its exit code and stderr. */
function runWithHook(body: string): { status: number | null; stderr: string } {
    const hook = path.join(repositoryRoot, "host", "models", "ignoreIpullRejections.ts");
    const script = `import { ignoreIpullRejections } from ${JSON.stringify(hook)};\nignoreIpullRejections();\n${body}\nsetTimeout(() => process.exit(0), 200);\n`;
    const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: repositoryRoot,
        encoding: "utf8",
        timeout: 30_000
    });
    return { status: result.status, stderr: result.stderr };
}

describe("ignoreIpullRejections (a process-wide hook, so each case runs in its own process)", () => {
    it("drops a rejection raised inside ipull: the host keeps running", () => {
        const ipullFrame = path.join(repositoryRoot, "node_modules", "ipull", "dist", "download", "x.js");
        const result = runWithHook(`const error = new Error("Expected 5 bytes, but got 9 bytes");
error.stack = "Error: Expected 5 bytes\\n    at fetchWithoutRetryChunks (${ipullFrame}:34:19)";
Promise.reject(error);`);
        expect(result.status, result.stderr).toBe(0);
    });

    it("still ends the process on any other unhandled rejection, as Node would", () => {
        const result = runWithHook(`Promise.reject(new Error("a bug of our own"));`);
        expect(result.status).not.toBe(0);
        expect(result.stderr).toContain("a bug of our own");
    });
}, 60_000);
