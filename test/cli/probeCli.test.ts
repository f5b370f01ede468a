import { spawn } from "node:child_process";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "../support/generatedModels.js";
import { closeServer, listenOnLoopback, pour, type PourCount } from "../support/misbehavingBackend.js";

// `npm run probe` as a user runs it, against a server whose /v1/models never ends: the probe
// stops reading at its cap and exits 2 ("could not run") with the bytes read and the cap.
const count: PourCount = { numBytesSent: 0, waiting: false, pouredAll: false };
let server: http.Server;
let url: string;

beforeAll(async () => {
    server = http.createServer((request, response) => {
        request.resume();
        response.writeHead(200, { "content-type": "application/json" });
        response.write('{"object":"list","data":[');
        void pour(response, '{"id":"m","object":"model"},'.repeat(1024), 256 * 1024 * 1024, count);
    });
    url = await listenOnLoopback(server);
});

afterAll(() => closeServer(server));

function probe(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, ["--import", "tsx", "probe/probeCli.ts", ...args], {
        cwd: repositoryRoot,
        stdio: ["ignore", "pipe", "pipe"]
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    return new Promise((resolve) =>
        child.once("exit", (code) => {
            clearTimeout(timer);
            resolve({ code, stdout, stderr });
        })
    );
}

describe("npm run probe against a server that never ends its model list", () => {
    it("could not run (exit 2), naming the bytes read and the cap", async () => {
        const run = await probe(["--url", url, "--model", "m"]);
        expect(run.stdout).toBe("");
        expect(run.stderr).toMatch(
            /^The leak probe could not run: http:\/\/127\.0\.0\.1:\d+\/v1\/models answered 200, but the answer could not be read: http:\/\/127\.0\.0\.1:\d+\/v1\/models sent an answer of more than 16,777,216 bytes \([\d,]+ read\); the probe reads no more of one answer and stopped there\.\n$/
        );
        expect(run.code).toBe(2);
        expect(count.pouredAll).toBe(false);
    });
});
