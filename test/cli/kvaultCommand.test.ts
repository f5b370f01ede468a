import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HUGGING_FACE_URL_VARIABLE } from "../../host/models/catalogue/HuggingFaceClient.js";
import { ensureGeneratedModel, repositoryRoot } from "../support/generatedModels.js";
import { startHuggingFaceServer, type HuggingFaceServer } from "../support/huggingFaceServer.js";
import { startModelFileServer, type ModelFileServer } from "../support/modelFileServer.js";
import { listening, smallEngineArgs, startServe, stopServe, type ServeProcess } from "./serveProcess.js";

// Issue 38, item 4: the `kvault` command, driven from a real terminal (tmux) as a user types it,
// against a real headless server on a generated model: run (a streamed chat with the meter's
// numbers), ls, ps, pull (from a loopback server standing in for Hugging Face) and launch (with a
// stand-in `claude` that prints the environment it was given), with the exit codes scripts read.
const API_KEY = "kvault-command-key-1";
const SMALLEST_FILE = "Qwen3-0.6B-Q4_K_M.gguf";
const TOOL_EXIT_CODE = 7;
const socket = `kvault-test-${process.pid}`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-command-"));
const toolDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-command-tools-"));
/** The most a command may take to show what it must in the terminal (tsx compiles the command on each start). */
const SCREEN_TIMEOUT_MS = 60_000;

let server: ServeProcess | undefined;
let url = "";
let files: ModelFileServer | undefined;
let huggingFace: HuggingFaceServer | undefined;
let nextWindow = 0;

function tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
}

/** A new terminal window running bash, in the checkout, with the environment a user of kvault would have; returns its target. */
function openTerminal(env: Record<string, string> = {}): string {
    const name = `w${nextWindow++}`;
    const exports = Object.entries({
        PATH: `${toolDir}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
        KVAULT_URL: url,
        KVAULT_API_KEY: API_KEY,
        ...env
    })
        .map(([key, value]) => `export ${key}='${value}'`)
        .join("; ");
    if (nextWindow === 1) {
        tmux(
            "new-session",
            "-d",
            "-s",
            "kvault",
            "-n",
            name,
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            repositoryRoot,
            "bash",
            "--norc",
            "--noprofile"
        );
    } else {
        tmux("new-window", "-t", "kvault", "-n", name, "-c", repositoryRoot, "bash", "--norc", "--noprofile");
    }
    const target = `kvault:${name}`;
    type(target, `${exports}; clear`);
    return target;
}

function type(target: string, line: string): void {
    tmux("send-keys", "-t", target, "-l", line);
    tmux("send-keys", "-t", target, "Enter");
}

function screen(target: string): string {
    return tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", target);
}

/** Waits, bounded, until the terminal shows `pattern`; returns the screen then. */
async function until(target: string, pattern: RegExp): Promise<string> {
    const deadline = Date.now() + SCREEN_TIMEOUT_MS;
    for (;;) {
        const text = screen(target);
        if (pattern.test(text)) {
            return text;
        }
        if (Date.now() > deadline) {
            throw new Error(`the terminal did not show ${pattern} within ${SCREEN_TIMEOUT_MS / 1000} s; it shows:\n${text}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
}

/** Types a kvault command and waits for its exit code, which the shell prints after it. */
async function runInTerminal(target: string, command: string): Promise<{ code: number; text: string }> {
    const marker = `exit-${nextWindow}-${Date.now()}`;
    type(target, `node bin/kvault.js ${command}; echo "[${marker} $?]"`);
    const text = await until(target, new RegExp(`\\[${marker} (\\d+)\\]`));
    return { code: Number(new RegExp(`\\[${marker} (\\d+)\\]`).exec(text)![1]), text };
}

beforeAll(async () => {
    files = await startModelFileServer();
    // the catalogue's smallest file's name, with the tiny generated model's bytes behind it
    files.serve(SMALLEST_FILE, { body: fs.readFileSync(ensureGeneratedModel("tiny")), ranges: true });
    huggingFace = await startHuggingFaceServer({ filesUrl: files.url });
    server = startServe(["--port", "0", "--data-dir", dataDir, "--model", ensureGeneratedModel("tiny"), ...smallEngineArgs], {
        KVAULT_API_KEY: API_KEY,
        [HUGGING_FACE_URL_VARIABLE]: huggingFace.url
    });
    url = await listening(server);
    // the stand-in for Claude Code: prints its arguments and the environment kvault gave it, then fails as a tool may
    fs.writeFileSync(
        path.join(toolDir, "claude"),
        `#!/bin/sh\necho "tool args: $*"\nenv | grep -E '^(ANTHROPIC|KVAULT|CLAUDE)' | sort | sed 's/^/tool env: /'\nexit ${TOOL_EXIT_CODE}\n`,
        { mode: 0o755 }
    );
}, 180_000);

afterAll(async () => {
    try {
        tmux("kill-server");
    } catch {
        // no terminal was opened
    }
    if (server !== undefined) {
        await stopServe(server);
    }
    await huggingFace?.close();
    await files?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(toolDir, { recursive: true, force: true });
});

describe("the kvault command in a terminal", () => {
    it("lists the served model (ls) and what is loaded with its KV pages (ps)", async () => {
        const terminal = openTerminal();
        const ls = await runInTerminal(terminal, "ls");
        expect(ls.code).toBe(0);
        expect(ls.text).toMatch(/NAME\s+SIZE\s+QUANT\s+CONTEXT\s+SERVED BY/);
        expect(ls.text).toMatch(/\n\S+\s+\d+ KB\s+\S+\s+512\s+kvault\n/);
        const ps = await runInTerminal(terminal, "ps");
        expect(ps.code).toBe(0);
        expect(ps.text).toMatch(/NAME\s+SIZE\s+PROCESSOR\s+UNTIL/);
        expect(ps.text).toMatch(/100% CPU\s+Forever/);
        expect(ps.text).toMatch(/KV pages: \d+ in the host pool \(\d+ free/);
        expect(ps.text).toMatch(/Context tokens: window 512/);
    });

    it("chats (run): streams each answer and says the meter's numbers, which grow with the chat, until /bye", async () => {
        const terminal = openTerminal();
        const { data } = (await (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${API_KEY}` } })).json()) as {
            data: { id: string }[];
        };
        type(terminal, `node bin/kvault.js run ${data[0]!.id} --max-tokens 6 --temperature 0; echo "[run-exit $?]"`);
        await until(terminal, /Chatting with .* in workspace kvault-run-[0-9a-f]+/);
        await until(terminal, />>> $/m);
        type(terminal, "Hello there, how are you today?");
        const first = await until(terminal, /\[(\d+) of 512 tokens in this chat's context \(\d+%\)\]/);
        const firstCount = Number(/\[(\d+) of 512 tokens/.exec(first)![1]);
        type(terminal, "And tell me more about it.");
        const second = await until(terminal, /\[\d+ of 512 tokens[^\n]*\n(?:.*\n)*?.*\[\d+ of 512 tokens/);
        const counts = [...second.matchAll(/\[(\d+) of 512 tokens/g)].map((match) => Number(match[1]));
        expect(counts[0]).toBe(firstCount);
        expect(counts[1]).toBeGreaterThan(firstCount);
        type(terminal, "/bye");
        await until(terminal, /\[run-exit 0\]/);
    });

    it("answers once with a prompt given, and refuses an unknown model with the ones there are (exit 1)", async () => {
        const terminal = openTerminal();
        const once = await runInTerminal(terminal, "run tiny-does-not-exist hello");
        expect(once.code).toBe(1);
        expect(once.text).toMatch(/has no model "tiny-does-not-exist"; it serves: /);
    });

    it("downloads a catalogue model into the server's library with a progress bar (pull)", async () => {
        const terminal = openTerminal();
        const pull = await runInTerminal(terminal, "pull qwen3-0.6b");
        expect(pull.code, pull.text).toBe(0);
        expect(pull.text).toMatch(/\[#{30}\] 100%/);
        const downloaded = new RegExp(`Downloaded (${path.join(dataDir, "models")}/\\S*${SMALLEST_FILE})`).exec(pull.text)?.[1];
        expect(downloaded, pull.text).toBeDefined();
        expect(fs.statSync(downloaded!).size).toBe(fs.statSync(ensureGeneratedModel("tiny")).size);
        expect(huggingFace!.requests.some((request) => request.includes(`/resolve/main/${SMALLEST_FILE}`))).toBe(true);
    });

    it("launches a tool with a key of its own and the environment it reads, passes its exit code on, and revokes the key after", async () => {
        const terminal = openTerminal();
        const refused = await runInTerminal(terminal, "launch claude");
        expect(refused.code).toBe(4);
        expect(refused.text).toMatch(/window of 512 tokens; claude needs at least 65,536/);

        const launched = await runInTerminal(terminal, "launch claude --allow-small-window -- -p 'say hi'");
        expect(launched.code).toBe(TOOL_EXIT_CODE);
        expect(launched.text).toMatch(/tool args: --model \S+ -p say hi/);
        expect(launched.text).toContain(`tool env: ANTHROPIC_BASE_URL=${url}`);
        expect(launched.text).toMatch(/tool env: ANTHROPIC_API_KEY=$/m);
        const token = /tool env: ANTHROPIC_AUTH_TOKEN=(\S+)/.exec(launched.text)![1]!;
        expect(token).not.toBe(API_KEY);
        expect(launched.text).toContain(`tool env: KVAULT_API_KEY=${token}`);
        // the tool's key is gone once it ended
        const after = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
        expect(after.status).toBe(401);
    });

    it("says no server answered, with exit code 3, at an address where none listens", async () => {
        const terminal = openTerminal({ KVAULT_URL: "http://127.0.0.1:9" });
        const unreachable = await runInTerminal(terminal, "ps");
        expect(unreachable.code).toBe(3);
        expect(unreachable.text).toMatch(/No Kvault answered at http:\/\/127\.0\.0\.1:9 .*kvault serve/);
    });
});
