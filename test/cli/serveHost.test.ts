import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "../support/generatedModels.js";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-serve-host-"));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

interface Run {
    readonly code: number | null;
    readonly stdout: string;
    readonly stderr: string;
}

/**
 * Runs `npm run serve`'s server as a user would (without npm's banner) until it exits, or, with
 * `until`, until its stderr matches, then stops it (SIGKILL: nothing of it has started by then).
 */
function serve(args: readonly string[], until?: RegExp): Promise<Run> {
    const child = spawn(process.execPath, ["--import", "tsx", "host/headless/serve.ts", "--port", "0", "--data-dir", dataDir, ...args], {
        cwd: repositoryRoot,
        env: { ...process.env, KVAULT_API_KEY: "host-test-key-1" },
        stdio: ["ignore", "pipe", "pipe"]
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (until?.test(stderr)) {
            child.kill("SIGKILL");
        }
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    return new Promise((resolve) =>
        child.once("exit", (code) => {
            clearTimeout(timer);
            resolve({ code, stdout, stderr });
        })
    );
}

// Kvault's server speaks plain HTTP and holds every chat: it listens beyond this machine only when
// the user says so, and then says what that means.
describe("npm run serve --host", () => {
    it.each(["0.0.0.0", "::", "192.0.2.1", "kvault.example"])(
        "refuses --host %s without --allow-remote, before anything starts",
        async (host) => {
            const run = await serve(["--host", host]);
            expect(run.code).toBe(2);
            expect(run.stdout).toBe("");
            expect(run.stderr).toContain(
                `--host ${host} is not a loopback address: other machines could reach Kvault's UI and API, over plain HTTP. Use 127.0.0.1 or ::1, or add --allow-remote if that is what you want.`
            );
        }
    );

    it("takes a non-loopback --host with --allow-remote, and warns on stderr first", async () => {
        // 192.0.2.1 is TEST-NET-1 (RFC 5737): never this machine's, so nothing is ever reachable through it.
        const run = await serve(["--host", "192.0.2.1", "--allow-remote"], /Warning: --allow-remote/);
        expect(run.stderr.split("\n")[0]).toBe(
            "Warning: --allow-remote: Kvault listens on 192.0.2.1, which other machines may reach. It speaks plain HTTP (no TLS): " +
                "anyone on the network who sees the API key or a login link can read and write every chat. Prefer 127.0.0.1 with an SSH tunnel."
        );
        expect(run.stdout).toBe("");
    });
});
