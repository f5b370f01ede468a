import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureGeneratedModel, repositoryRoot } from "../support/generatedModels.js";
import { listening, RpcSocket, smallEngineArgs, startServe, stopServe, type ServeProcess } from "./serveProcess.js";

// `kvault pull` and `kvault launch` reach the host's RPC over its WebSocket, which takes only the
// server's own key: a key made for a tool (which the HTTP API takes) is refused with the
// handshake's 401, said as such with exit 4; no server at the address is exit 3.
const API_KEY = "kvault-refusals-key-1";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-refusals-"));

let server: ServeProcess | undefined;
let url = "";

/** Runs `node bin/kvault.js ...args` with `env`; its exit code and stderr. */
function kvault(args: readonly string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
        execFile(
            process.execPath,
            ["bin/kvault.js", ...args],
            { cwd: repositoryRoot, env: { ...process.env, ...env } },
            (error, _stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stderr })
        );
    });
}

beforeAll(async () => {
    server = startServe(["--port", "0", "--data-dir", dataDir, "--model", ensureGeneratedModel("tiny"), ...smallEngineArgs], {
        KVAULT_API_KEY: API_KEY
    });
    url = await listening(server);
}, 180_000);

afterAll(async () => {
    if (server !== undefined) {
        await stopServe(server);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("kvault's calls into the host's RPC, refused", () => {
    it("says a key the RPC refuses was refused for the settings (401), with exit 4, though the HTTP API takes it", async () => {
        const rpc = await RpcSocket.connect(url, API_KEY);
        const { key } = await rpc.result<{ key: string }>("createApiKey", { id: "a-tool" });
        rpc.close();
        expect((await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

        const pulled = await kvault(["pull", "qwen3-0.6b"], { KVAULT_URL: url, KVAULT_API_KEY: key });
        expect(pulled.code, pulled.stderr).toBe(4);
        expect(pulled.stderr).toContain(
            `kvault: Kvault at ${url} refused the API key for its settings (401). Give the key \`kvault serve\` printed, the server's own, with --api-key or KVAULT_API_KEY.`
        );
    });

    it("says no Kvault answered, with exit 3, where none listens", async () => {
        const pulled = await kvault(["pull", "qwen3-0.6b"], { KVAULT_URL: "http://127.0.0.1:1", KVAULT_API_KEY: API_KEY });
        expect(pulled.code, pulled.stderr).toBe(3);
        expect(pulled.stderr).toMatch(/^kvault: No Kvault answered at http:\/\/127\.0\.0\.1:1 \(.*\)\. Start one with `kvault serve`/);
    });
});
