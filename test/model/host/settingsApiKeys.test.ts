import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "../../support/generatedModels.js";
import { RawClient } from "./rpcHost.js";

const DEFAULT_KEY = "settings-test-key-42";

interface Completion {
    readonly choices: readonly { readonly message: { readonly content: string } }[];
    readonly usage: { readonly prompt_tokens_details: { readonly cached_tokens: number } };
}

/** POST /v1/chat/completions with `key`; rejects when the connection is closed before the answer ends. */
function post(url: string, key: string, body: unknown): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
        const request = http.request(
            `${url}/v1/chat/completions`,
            { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" } },
            (response) => {
                let text = "";
                response.setEncoding("utf8");
                response.on("data", (chunk: string) => void (text += chunk));
                response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
                response.on("error", reject);
                response.on("aborted", () => reject(new Error("aborted")));
            }
        );
        request.on("error", reject);
        request.end(JSON.stringify(body));
    });
}

describe("API keys created and revoked on the settings screen (npm run serve, its RPC and its HTTP API)", () => {
    let dataDir: string;
    let child: ChildProcess;
    let url: string;
    let stderr = "";
    beforeAll(async () => {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-settings-keys-"));
        child = spawn(
            process.execPath,
            [
                ...["--import", "tsx", "host/headless/serve.ts", "--port", "0", "--data-dir", dataDir, "--api-key", DEFAULT_KEY],
                ...["--context", "512", "--decode-sequences", "2", "--page-tokens", "16"],
                // A long prompt's handoff waits 1.5 s a step (the page map's demo mode): a turn still runs when its key is revoked.
                ...["--handoff-demo", "1500"]
            ],
            { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] }
        );
        let stdout = "";
        child.stdout!.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
        child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
        for (let attempt = 0; attempt < 900 && !/^Kvault listening on /m.test(stdout); attempt++) {
            if (child.exitCode !== null) {
                throw new Error(`serve exited with ${child.exitCode}: ${stderr}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
        url = /^Kvault listening on (\S+)$/m.exec(stdout)?.[1] ?? "";
        expect(url, stderr).not.toBe("");
    });
    afterAll(async () => {
        if (child.exitCode === null) {
            const exited = new Promise((resolve) => child.once("exit", resolve));
            child.kill("SIGTERM");
            await exited;
        }
        fs.rmSync(dataDir, { recursive: true, force: true });
    });

    const complete = async (key: string, messages: readonly { role: string; content: string }[]): Promise<Completion> => {
        const answer = await post(url, key, { model: "tiny", messages, user: "shared", max_tokens: 6, temperature: 0 });
        expect(answer.status, answer.text).toBe(200);
        return JSON.parse(answer.text) as Completion;
    };

    it("a created key works at once in a namespace of its own, and revoked it is a 401 at once, its open connection closed", async () => {
        const rpc = await RawClient.connect(url, { key: DEFAULT_KEY });
        const created = (await rpc.call(1, "createApiKey", { id: "carol" })) as {
            result: { id: string; key: string; view: { apiKeys: unknown[] } };
        };
        const { key } = created.result;
        expect(created.result.id).toBe("carol");
        expect(key).toMatch(/^kv-[0-9a-f]{48}$/);
        expect(created.result.view.apiKeys).toEqual([{ id: "carol", createdAt: expect.any(String), source: "settings" }]);
        // settings.json keeps it, readable by this user alone.
        const file = path.join(dataDir, "settings.json");
        expect((JSON.parse(fs.readFileSync(file, "utf8")) as { apiKeys: { id: string; key: string }[] }).apiKeys).toEqual([
            { id: "carol", key, createdAt: expect.any(String), generation: expect.stringMatching(/^[0-9a-f]{16}$/) }
        ]);
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
        // The view never lists a secret.
        expect(JSON.stringify(((await rpc.call(2, "getSettings", {})) as { result: unknown }).result)).not.toContain(key);

        // Its workspaces are its own: the default key naming the same workspace reuses none of its KV.
        const first = [{ role: "user", content: "Carol's secret is pages." }];
        const answer = await complete(key, first);
        const followUp = [
            ...first,
            { role: "assistant", content: answer.choices[0]!.message.content },
            { role: "user", content: "Again?" }
        ];
        expect((await complete(key, followUp)).usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
        expect((await complete(DEFAULT_KEY, followUp)).usage.prompt_tokens_details.cached_tokens).toBe(0);

        // A streaming answer of the key that runs when the key is revoked is cut off, never finished: its connection is closed.
        const long = [{ role: "user", content: "Tell me about pages. ".repeat(15) }]; // 300 byte tokens: prefilled, then handed off
        const streaming = post(url, key, { model: "tiny", messages: long, max_tokens: 40, stream: true }).then(
            (finished) => ({ finished }),
            (error: unknown) => ({ error: error as Error })
        );
        for (let attempt = 0; attempt < 300; attempt++) {
            const health = (await (await fetch(`${url}/health`)).json()) as { state: string };
            if (health.state === "busy") {
                break; // the turn is in the engine, in its slowed handoff
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(await rpc.call(3, "revokeApiKey", { id: "carol" })).toMatchObject({ id: 3, result: { apiKeys: [] } });
        const cut = await streaming;
        expect("error" in cut ? cut.error.message : `finished with ${cut.finished.status}: ${cut.finished.text.slice(-40)}`).toMatch(
            /socket hang up|aborted|ECONNRESET/
        );

        const refused = await post(url, key, { model: "tiny", messages: first, max_tokens: 1 });
        expect(refused.status).toBe(401);
        expect((JSON.parse(refused.text) as { error: { code: string } }).error.code).toBe("invalid_api_key");
        expect((JSON.parse(fs.readFileSync(file, "utf8")) as { apiKeys: unknown[] }).apiKeys).toEqual([]);
        // The default key keeps working, and keeps its own namespace.
        expect((await complete(DEFAULT_KEY, first)).choices[0]!.message.content.length).toBeGreaterThan(0);
        expect(await rpc.call(4, "revokeApiKey", { id: "carol" })).toMatchObject({ id: 4, error: { code: "api_key_not_revocable" } });
        expect(await rpc.call(5, "createApiKey", { id: "bad:id" })).toMatchObject({ id: 5, error: { code: "invalid_request" } });
        expect(stderr).toContain('Settings: API key "carol" revoked; 1 workspace(s) of it forgotten.');
        rpc.socket.close();
    });
});
