import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installedSpeculativeValidation } from "../../engine/runtime/speculationFix/speculativeValidation.js";
import { ensureGeneratedModel, repositoryRoot } from "../support/generatedModels.js";
import { makeProductionCopy } from "./productionCopy.js";
import { listening, smallEngineArgs, startServe, stopServe } from "./serveProcess.js";

// Issue 34, item 4: `npm run serve` ran TypeScript through tsx, a devDependency, in the host and in
// the engine process, and so did the postinstall step: after `npm ci --omit=dev` neither could run.
// Now `npm run build` emits the server and every process it starts as JavaScript, and both scripts
// run with node alone: here in a copy where tsx cannot be resolved, with NODE_OPTIONS cleared.
const API_KEY = "built-serve-key-1";
const copy = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-production-"));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-built-serve-"));
const nodeAlone = { NODE_OPTIONS: undefined };
/** The building of three bundles on a loaded machine. */
const BUILD_HOOK_TIMEOUT_MS = 300_000;

/** A package.json script's arguments to node; fails unless it is node alone, with no loader. */
function nodeArguments(name: string): string[] {
    const { scripts } = JSON.parse(fs.readFileSync(path.join(repositoryRoot, "package.json"), "utf8")) as {
        scripts: Record<string, string>;
    };
    const [command, ...rest] = scripts[name]!.split(" ");
    expect({ name, command, rest }).toEqual({ name, command: "node", rest: expect.not.arrayContaining(["--import", "&&"]) });
    return rest;
}

beforeAll(() => makeProductionCopy(copy), BUILD_HOOK_TIMEOUT_MS);
afterAll(() => {
    fs.rmSync(copy, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("the production build (npm run build, then npm ci --omit=dev)", () => {
    it("emits the server, the engine process and the inspection process as JavaScript that imports no tsx", () => {
        const built = path.join(copy, "out", "main");
        for (const entry of ["serve.js", "engineProcess.js", "inspectModelProcess.js", "cli.js", "probe.js"]) {
            expect(fs.existsSync(path.join(built, entry)), entry).toBe(true);
        }
        for (const file of fs.readdirSync(built).filter((name) => name.endsWith(".js"))) {
            const text = fs.readFileSync(path.join(built, file), "utf8");
            expect(text, file).not.toMatch(/from\s*["']tsx["']|import\(\s*["']tsx["']\s*\)|["']--import["'],\s*["']tsx["']/);
        }
        // the copy is what --omit=dev leaves: tsx is not there to be found
        expect(() => createRequire(path.join(built, "serve.js")).resolve("tsx")).toThrow(/Cannot find module 'tsx'/);
    });

    it("npm run serve starts with node alone and answers a chat completion over HTTP with the tiny model", async () => {
        const model = ensureGeneratedModel("tiny");
        const server = startServe(
            ["--port", "0", "--data-dir", dataDir, "--model", model, ...smallEngineArgs],
            { ...nodeAlone, KVAULT_API_KEY: API_KEY },
            { nodeArgs: nodeArguments("serve"), cwd: copy }
        );
        try {
            const url = await listening(server);
            const headers = { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" };
            const models = (await (await fetch(`${url}/v1/models`, { headers })).json()) as { data: { id: string }[] };
            const response = await fetch(`${url}/v1/chat/completions`, {
                method: "POST",
                headers,
                body: JSON.stringify({ model: models.data[0]!.id, messages: [{ role: "user", content: "Hello" }], max_tokens: 4 })
            });
            const answer = (await response.json()) as { choices: { message: { content: string } }[]; usage: { completion_tokens: number } };
            expect(response.status).toBe(200);
            expect(answer.usage.completion_tokens).toBeGreaterThan(0);
            expect(typeof answer.choices[0]!.message.content).toBe("string");
            // the engine ran in its own process, started from the built engineProcess.js
            expect(server.stderr()).toMatch(/^Engine: Kvault synthetic tiny on /m);
            // the `kvault` command (package.json's bin) runs as built too, with node alone: issue 38, item 4
            const bin = JSON.parse(fs.readFileSync(path.join(copy, "package.json"), "utf8")) as { bin: { kvault: string } };
            const ps = await promisify(execFile)(process.execPath, [path.join(copy, bin.bin.kvault), "ps", "--url", url], {
                cwd: os.tmpdir(),
                env: { ...process.env, ...nodeAlone, KVAULT_API_KEY: API_KEY }
            });
            expect(ps.stdout).toMatch(/^NAME\s+SIZE\s+PROCESSOR\s+UNTIL\n\S+\s+\d+ KB\s+100% CPU\s+Forever\n/);
        } finally {
            expect(await stopServe(server)).toEqual({ code: 0, signal: null });
        }
    });

    it("npm install's postinstall step runs with node alone and leaves a fixed node-llama-cpp as it is", async () => {
        const run = await promisify(execFile)(process.execPath, nodeArguments("postinstall"), {
            cwd: copy,
            env: { ...process.env, ...nodeAlone }
        });
        expect(run.stdout + run.stderr).toBe("");
        expect(installedSpeculativeValidation()).toBe("fixed");
    });

    it("npm run serve without a build says what to run, and exits 2", async () => {
        const unbuilt = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-unbuilt-"));
        try {
            const script = nodeArguments("serve")[0]!;
            fs.mkdirSync(path.dirname(path.join(unbuilt, script)), { recursive: true });
            fs.copyFileSync(path.join(copy, script), path.join(unbuilt, script));
            const run = await promisify(execFile)(process.execPath, [script], { cwd: unbuilt, env: { ...process.env, ...nodeAlone } }).then(
                () => ({ code: 0, stderr: "" }),
                (error: { code: number; stderr: string }) => error
            );
            expect(run.code).toBe(2);
            expect(run.stderr).toBe(
                `Kvault's headless server is not built: ${path.join(unbuilt, "out", "main", "serve.js")} is missing. Run \`npm run build\` where the devDependencies are installed (npm ci), then \`npm run serve\` again.\n`
            );
        } finally {
            fs.rmSync(unbuilt, { recursive: true, force: true });
        }
    });
});
