import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "../../support/generatedModels.js";

interface Started {
    readonly child: ChildProcess;
    readonly stdout: string[];
    readonly stderr: string[];
    readonly exit: Promise<number | null>;
}

/** Runs `npm run serve`'s server as a user would (without npm's banner), collecting its output. */
function serve(args: string[], env: Record<string, string> = {}): Started {
    const child = spawn(process.execPath, ["--import", "tsx", "host/headless/serve.ts", ...args], {
        cwd: repositoryRoot,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
    });
    const stdout: string[] = [];
    const stderr: string[] = [];
    child.stdout!.on("data", (chunk: Buffer) => stdout.push(...chunk.toString().split("\n").filter(Boolean)));
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(...chunk.toString().split("\n").filter(Boolean)));
    const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, stdout, stderr, exit };
}

async function listening(started: Started): Promise<string> {
    for (let attempt = 0; attempt < 600; attempt++) {
        const line = started.stdout.find((candidate) => candidate.startsWith("Kvault listening on "));
        if (line !== undefined) {
            return line.slice("Kvault listening on ".length);
        }
        if (started.child.exitCode !== null) {
            throw new Error(`serve exited with ${started.child.exitCode}: ${started.stderr.join("\n")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`serve did not start in 60 s: ${started.stderr.join("\n")}`);
}

/** The login link serve prints on stdout (out/renderer is built: the e2e setup and `npm run serve` build it). */
const LOGIN_LINE = /^Kvault login link \(works once\): (http:\/\/\S+\/\?token=[0-9a-f]{64})$/;

describe("npm run serve: the headless server in its own processes", () => {
    let dataDir: string;
    let started: Started;
    let url: string;
    const apiKey = "serve-test-key-42";
    const aliceKey = "alice-serve-key-7";
    beforeAll(async () => {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-serve-"));
        started = serve(
            [
                ...["--port", "0", "--data-dir", dataDir, "--context", "512", "--decode-sequences", "2", "--page-tokens", "16"],
                // paced (5 ms a token), so the abort lands mid-answer: unpaced, the tiny model writes 400 tokens in 0.2 s
                ...["--stream-demo", "5"],
                ...["--extra-api-key", `alice=${aliceKey}`]
            ],
            {
                KVAULT_API_KEY: apiKey
            }
        );
        url = await listening(started);
    }, 90_000);
    afterAll(async () => {
        started.child.kill("SIGTERM");
        expect(await started.exit).toBe(0);
        fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("prints its address and a login link on stdout, generated the demo model into the data directory, and took the key from the environment", () => {
        expect(started.stdout).toEqual([`Kvault listening on ${url}`, expect.stringMatching(LOGIN_LINE)]);
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(fs.readdirSync(path.join(dataDir, "models"))).toEqual(["tiny-v1.gguf"]);
        expect(started.stderr.join("\n")).not.toContain(apiKey);
    });

    it("takes an --extra-api-key for the API (not /metrics), names it without printing it, and says it is ready on /health", async () => {
        const withKey = (key: string): RequestInit => ({ headers: { Authorization: `Bearer ${key}` } });
        expect((await fetch(`${url}/v1/models`, withKey(aliceKey))).status).toBe(200);
        expect((await fetch(`${url}/metrics`, withKey(aliceKey))).status).toBe(401);
        expect((await fetch(`${url}/v1/models`, withKey("bob-serve-key-8"))).status).toBe(401);
        expect(started.stderr.join("\n")).toContain("Extra API keys, each with its own workspaces: alice.");
        expect(started.stderr.join("\n")).not.toContain(aliceKey);
        const health = await fetch(`${url}/health`);
        expect(health.status).toBe(200);
        expect(await health.json()).toMatchObject({ status: "ok", state: "ready" });
    });

    it("serves the openai client: models, a streamed answer, a 400 for a prompt that does not fit, and an abort that gives the pages back", async () => {
        const client = new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
        expect((await client.models.list()).data.map((model) => model.id)).toEqual(["tiny"]);

        let text = "";
        for await (const chunk of await client.chat.completions.create({
            model: "tiny",
            messages: [{ role: "user", content: "hello" }],
            max_tokens: 6,
            temperature: 0,
            stream: true
        })) {
            text += chunk.choices[0]?.delta.content ?? "";
        }
        expect(text.length).toBeGreaterThan(0);

        const tooLong = await client.chat.completions
            .create({ model: "tiny", messages: [{ role: "user", content: "long ".repeat(800) }], max_tokens: 8 })
            .catch((error: unknown) => error);
        expect(tooLong).toBeInstanceOf(OpenAI.BadRequestError);
        expect((tooLong as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("context_length_exceeded");

        const controller = new AbortController();
        const stream = await client.chat.completions.create(
            {
                model: "tiny",
                messages: [{ role: "user", content: "a long answer, please, about pages " }],
                max_tokens: 400,
                temperature: 0,
                stream: true
            },
            { signal: controller.signal }
        );
        try {
            let numChunks = 0;
            for await (const chunk of stream) {
                void chunk;
                if (++numChunks === 2) {
                    controller.abort();
                }
            }
        } catch {
            /* the client reports the abort */
        }
        let metrics = "";
        for (let attempt = 0; attempt < 100; attempt++) {
            metrics = await (await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${apiKey}` } })).text();
            if (/kvault_requests_total\{outcome="cancelled"\} 1/.test(metrics)) {
                break;
            }
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(metrics).toMatch(/kvault_requests_total\{outcome="cancelled"\} 1/);
        expect(metrics).toMatch(/kvault_page_leases_active 0/);
        expect(metrics).toMatch(/kvault_pages\{state="quarantined"\} 0/);
    });

    it("serves the renderer with no secret in it; the printed login link lets one browser in, once, and the next link is printed", async () => {
        const page = await (await fetch(`${url}/`)).text();
        expect(page).toContain('<meta name="kvault-session" content="none">');
        expect(page).not.toContain(apiKey);
        const link = LOGIN_LINE.exec(started.stdout[1]!)![1]!;
        expect(link.startsWith(`${url}/?token=`)).toBe(true);
        expect(page).not.toContain(new URL(link).searchParams.get("token")!);

        const login = await fetch(link, { redirect: "manual" });
        expect(login.status).toBe(303);
        expect(login.headers.get("location")).toMatch(/^\/#kvault-session-token=[0-9a-f]{64}$/);
        expect(login.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=Strict$/);
        const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
        expect(await (await fetch(`${url}/`, { headers: { Cookie: cookie } })).text()).toContain(
            '<meta name="kvault-session" content="active">'
        );

        expect((await fetch(link, { redirect: "manual" })).status).toBe(403);
        for (let attempt = 0; attempt < 100 && started.stdout.length < 3; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(started.stdout).toHaveLength(3);
        const next = LOGIN_LINE.exec(started.stdout[2]!)![1]!;
        expect(next).not.toBe(link);
        expect((await fetch(next, { redirect: "manual" })).status).toBe(303);
    });
});

describe("npm run serve reports a window it had to clamp", () => {
    it("clamps the window to the measured prefill capacity and says so", async () => {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-serve-clamp-"));
        const started = serve([
            "--port",
            "0",
            "--data-dir",
            dataDir,
            "--context",
            "512",
            "--prefill-capacity",
            "256",
            "--page-tokens",
            "16",
            "--api-key",
            "clamp-test-key"
        ]);
        try {
            await listening(started);
            expect(started.stderr.join("\n")).toContain(
                "The window was clamped from 512 to 256 tokens: the measured prefill capacity is smaller."
            );
        } finally {
            started.child.kill("SIGTERM");
            expect(await started.exit).toBe(0);
            fs.rmSync(dataDir, { recursive: true, force: true });
        }
    }, 90_000);
});

describe("npm run serve refuses what it cannot honour, with a message and a non-zero exit", () => {
    it.each([
        [["--model", "/nonexistent/model.gguf"], 1, /Cannot read the model \/nonexistent\/model.gguf/],
        [["--model", "package.json"], 1, /is not a GGUF file/],
        [["--port", "99999"], 2, /--port is "99999"/],
        [["--frobnicate"], 2, /Unknown option "--frobnicate"/]
    ])(
        "%j",
        async (args, code, message) => {
            const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-serve-bad-"));
            try {
                const started = serve([...args, "--data-dir", dataDir]);
                expect(await started.exit).toBe(code);
                expect(started.stdout).toEqual([]);
                expect(started.stderr.join("\n")).toMatch(message);
            } finally {
                fs.rmSync(dataDir, { recursive: true, force: true });
            }
        },
        60_000
    );
});
