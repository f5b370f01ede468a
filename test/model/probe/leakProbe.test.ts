import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProbeReport } from "../../../probe/probeReport.js";
import { listening, smallEngineArgs, startServe, stopServe, type ServeProcess } from "../../cli/serveProcess.js";
import { generatedModelPath, repositoryRoot } from "../../support/generatedModels.js";
import { startLeakyServer, type LeakyServer } from "./leakyServer.js";

// `npm run probe` as a user runs it, against Kvault's own headless server (the `npm run serve`
// code path) with two keys, and against Kvault's API over an engine with the 2026 incident's
// guards off, which it must catch. A run takes a minute or two of the tiny model's CPU time.
const KEY_A = "probe-key-alice";
const KEY_B = "probe-key-bobby";
const PROBE_TIMEOUT_MS = 600_000;

interface ProbeRun {
    readonly code: number | null;
    readonly stdout: string;
    readonly stderr: string;
}

function runProbe(args: readonly string[]): Promise<ProbeRun> {
    const child = spawn(process.execPath, ["--import", "tsx", "probe/probeCli.ts", ...args], {
        cwd: repositoryRoot,
        env: { ...process.env, PROBE_KEY_A: KEY_A, PROBE_KEY_B: KEY_B, PROBE_KEY_WRONG: "probe-key-wrong" },
        stdio: ["ignore", "pipe", "pipe"]
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS - 10_000);
    return new Promise((resolve) =>
        child.once("exit", (code) => {
            clearTimeout(timer);
            resolve({ code, stdout, stderr });
        })
    );
}

const verdicts = (report: ProbeReport): Record<string, string> =>
    Object.fromEntries(report.probes.map((probe) => [probe.id, probe.verdict]));

describe("npm run probe against Kvault's headless server", () => {
    let scratch: string;
    let server: ServeProcess;
    let url: string;
    beforeAll(async () => {
        scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-probe-"));
        server = startServe(
            [
                "--port",
                "0",
                "--data-dir",
                path.join(scratch, "data"),
                "--model",
                generatedModelPath("tiny"),
                ...smallEngineArgs,
                "--extra-api-key",
                `bob=${KEY_B}`
            ],
            { KVAULT_API_KEY: KEY_A }
        );
        url = await listening(server);
    });
    afterAll(async () => {
        await stopServe(server);
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it(
        "with two keys: every probe clean or inconclusive with its reason, exit 0, the JSON written",
        async () => {
            const json = path.join(scratch, "clean.json");
            const run = await runProbe([
                "--url",
                `${url}/v1`,
                "--model",
                "tiny",
                "--key-env",
                "PROBE_KEY_A",
                "--second-key-env",
                "PROBE_KEY_B",
                "--max-tokens",
                "16",
                "--json",
                json
            ]);
            expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
            expect(run.stdout).toContain("Result: no finding (exit 0)");
            const report = JSON.parse(fs.readFileSync(json, "utf8")) as ProbeReport;
            expect(report).toMatchObject({
                version: 1,
                model: "tiny",
                // Kvault's /v1/models says its window (max_model_len), so no --window is needed.
                window: 512,
                windowSource: "/v1/models max_model_len",
                calibration: { measured: true }
            });
            expect(report.identities).toMatch(/^two keys/);
            expect(verdicts(report)).toEqual({
                "window-sweep": "pass",
                // The tiny model's weights are random: it repeats no marker, so truncation cannot be read from its answers.
                truncation: "inconclusive",
                recall: "pass",
                completion: "pass",
                divergence: "pass",
                "cancel-race": "pass"
            });
            expect(report.exchanges.filter((exchange) => exchange.probe === "window-sweep").map((exchange) => exchange.got.status)).toEqual(
                [200, 200, 400, 400]
            );
            expect(report.exchanges).toHaveLength(report.estimate.numRequests);
            expect(report.exchanges.every((exchange) => exchange.foreignMarkers.length === 0)).toBe(true);
            const cancelled = report.exchanges.find((exchange) => exchange.sent.stream);
            expect(cancelled).toMatchObject({ probe: "cancel-race", identity: "A", got: { aborted: true } });
        },
        PROBE_TIMEOUT_MS
    );

    it("exits 2 with what happened when it cannot run: a refused key, a missing model, nothing listening", async () => {
        const refused = await runProbe(["--url", url, "--model", "tiny", "--key-env", "PROBE_KEY_WRONG", "--window", "512"]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(`${url}/v1/models answered 401: the key was refused.`);
        const missing = await runProbe(["--url", url, "--model", "gpt-9", "--key-env", "PROBE_KEY_A"]);
        expect(missing.code).toBe(2);
        expect(missing.stderr).toContain(`There is no model "gpt-9" at ${url}: /v1/models lists tiny.`);
        // A loopback port nothing listens on: one just given up.
        const spare = net.createServer();
        await new Promise<void>((resolve) => spare.listen(0, "127.0.0.1", resolve));
        const { port } = spare.address() as net.AddressInfo;
        await new Promise((resolve) => spare.close(resolve));
        const unreachable = await runProbe(["--url", `http://127.0.0.1:${port}`, "--model", "tiny", "--window", "512"]);
        expect(unreachable.code).toBe(2);
        expect(unreachable.stderr).toMatch(/is unreachable \(ECONNREFUSED\)/);
        expect([refused, missing, unreachable].every((run) => run.stdout === "")).toBe(true);
    });
});

describe("npm run probe against an engine with the 2026 incident's guards off", () => {
    let server: LeakyServer;
    let scratch: string;
    beforeAll(async () => {
        scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-probe-leaky-"));
        server = await startLeakyServer(KEY_A);
    });
    afterAll(async () => {
        await server.close();
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it(
        "reports the leak it advertises no sign of: a finding, exit 1, in the JSON too",
        async () => {
            const json = path.join(scratch, "leaky.json");
            // One key, two user values: the identities the probe has when a server gives one key.
            const run = await runProbe([
                "--url",
                server.url,
                "--model",
                "tiny",
                "--key-env",
                "PROBE_KEY_A",
                "--window",
                "512",
                "--max-tokens",
                "16",
                "--json",
                json
            ]);
            expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
            expect(run.stdout).toMatch(/Result: \d+ findings? \(exit 1\)\./);
            const report = JSON.parse(fs.readFileSync(json, "utf8")) as ProbeReport;
            expect(report.verdict).toBe("finding");
            expect(report.identities).toMatch(/^one key, two identities told apart by their user values/);
            // The window is what the engine admits, so the sweep looks sound: the stale KV shows in B's answers.
            expect(report.probes.find((probe) => probe.id === "divergence")).toMatchObject({
                verdict: "finding",
                // Its text, or where the text held on this small model, its tokens' log-probabilities.
                reason: expect.stringMatching(/long prompt (changed|kept its text, but its tokens' log-probabilities moved)/)
            });
        },
        PROBE_TIMEOUT_MS
    );

    it(
        "told the window the engine measured (its prefill's 256 tokens), finds the 200s where 400s were due",
        async () => {
            const json = path.join(scratch, "leaky-256.json");
            const run = await runProbe([
                "--url",
                server.url,
                "--model",
                "tiny",
                "--key-env",
                "PROBE_KEY_A",
                "--window",
                "256",
                "--max-tokens",
                "8",
                "--json",
                json
            ]);
            expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
            const report = JSON.parse(fs.readFileSync(json, "utf8")) as ProbeReport;
            expect(report.probes.find((probe) => probe.id === "window-sweep")).toMatchObject({
                verdict: "finding",
                reason: expect.stringContaining("just over the window: a 200 where a 400 was due")
            });
            expect(report.exchanges.filter((exchange) => exchange.probe === "window-sweep").map((exchange) => exchange.got.status)).toEqual(
                [200, 200, 200, 200]
            );
        },
        PROBE_TIMEOUT_MS
    );
});
