import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PIPED_PROMPT_CHARS } from "../../host/cli/readPipedPrompt.js";
import { ensureGeneratedModel, repositoryRoot } from "../support/generatedModels.js";
import { listening, smallEngineArgs, startServe, stopServe, type ServeProcess } from "./serveProcess.js";

// `kvault run MODEL` with text piped in reads at most the largest prompt the server accepts
// (turnLimits.maxMessageChars): past it, it stops reading, even from a pipe that has not ended,
// and says the size, the limit and what to do, with the usage exit code. It read without a bound.
const API_KEY = "kvault-piped-key-1";
/** The most the command may take to end once it was given more than the limit (tsx compiles it on start). */
const EXIT_TIMEOUT_MS = 60_000;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-piped-"));

let server: ServeProcess | undefined;
let url = "";
let modelId = "";

beforeAll(async () => {
    server = startServe(["--port", "0", "--data-dir", dataDir, "--model", ensureGeneratedModel("tiny"), ...smallEngineArgs], {
        KVAULT_API_KEY: API_KEY
    });
    url = await listening(server);
    const models = (await (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${API_KEY}` } })).json()) as {
        data: { id: string }[];
    };
    modelId = models.data[0]!.id;
}, 180_000);

afterAll(async () => {
    if (server !== undefined) {
        await stopServe(server);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("kvault run with text piped in", () => {
    it("stops reading a pipe past the largest prompt the server accepts, and says the size, the limit and what to do (exit 2)", async () => {
        const command = spawn(process.execPath, ["bin/kvault.js", "run", modelId], {
            cwd: repositoryRoot,
            env: { ...process.env, KVAULT_URL: url, KVAULT_API_KEY: API_KEY },
            stdio: ["pipe", "pipe", "pipe"]
        });
        let stderr = "";
        command.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
        command.stdin.on("error", () => undefined); // the command stops reading: later writes may meet a closed pipe
        const exited = new Promise<number | null>((resolve) => command.once("exit", (code) => resolve(code)));
        // one character over the limit, and the pipe left open, as `yes | kvault run` leaves it
        command.stdin.write("a".repeat(MAX_PIPED_PROMPT_CHARS + 1));
        const timer = setTimeout(() => command.kill("SIGKILL"), EXIT_TIMEOUT_MS);
        const code = await exited;
        clearTimeout(timer);
        expect(code, stderr).toBe(2);
        expect(stderr).toContain("The text piped in is over 4,000,000 characters, the most Kvault takes in one message");
        expect(stderr).toMatch(/it stopped reading at [\d,]+ characters, [\d,]+ bytes\)\. Pipe a shorter text, or split it/);
    }, 120_000);
});
