import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listening, RpcSocket, smallEngineArgs, startServe, stopServe, type ServeProcess } from "./serveProcess.js";

// Issue 36: what an API key's holder could learn of, or take from, another's. Through `npm run serve`
// as a user runs it, its RPC (the settings screen's createApiKey / revokeApiKey) and its HTTP API,
// with a loopback backend that records the `user` each forwarded request names and holds the
// requests that ask it to, so that places in flight stay taken for as long as a test needs them.
const DEFAULT_KEY = "isolation-default-key-1";
const HOLD = "hold this request";

interface Answer {
    readonly status: number;
    readonly json: {
        readonly usage?: { readonly prompt_tokens: number; readonly prompt_tokens_details: { readonly cached_tokens: number } };
        readonly error?: { readonly type: string; readonly code: string | null; readonly message: string; readonly param?: string | null };
    };
}

/** POST /v1/chat/completions on a connection of its own (no pool, so held requests never queue behind each other). */
function post(url: string, key: string, body: unknown): Promise<Answer> {
    return new Promise((resolve, reject) => {
        const request = http.request(
            `${url}/v1/chat/completions`,
            { method: "POST", agent: false, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" } },
            (response) => {
                let text = "";
                response.setEncoding("utf8");
                response.on("data", (chunk: string) => void (text += chunk));
                response.on("end", () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) as Answer["json"] }));
                response.on("error", reject);
            }
        );
        request.on("error", reject);
        request.end(JSON.stringify(body));
    });
}

describe("API keys keep their holders apart (npm run serve)", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-key-isolation-"));
    /** The `user` of each chat completion the backend received, in order (null: none sent). */
    const upstreamUsers: unknown[] = [];
    /** Answers the backend holds back, until the test lets them go. */
    const held: http.ServerResponse[] = [];
    let backend: http.Server;
    let server: ServeProcess;
    let url: string;
    let rpc: RpcSocket;

    const answerCompletion = (response: http.ServerResponse): void => {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(
            JSON.stringify({
                id: "chatcmpl-1",
                object: "chat.completion",
                choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
                usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }
            })
        );
    };

    beforeAll(async () => {
        backend = http.createServer((request, response) => {
            let text = "";
            request.on("data", (chunk: Buffer) => void (text += chunk.toString()));
            request.on("end", () => {
                if (request.url === "/v1/models") {
                    response.writeHead(200, { "Content-Type": "application/json" });
                    return void response.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model" }] }));
                }
                const body = JSON.parse(text) as { user?: unknown; messages?: { content?: unknown }[] };
                upstreamUsers.push(body.user ?? null);
                if (body.messages?.[0]?.content === HOLD) {
                    held.push(response);
                    return;
                }
                answerCompletion(response);
            });
        });
        await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
        const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
        server = startServe(["--port", "0", "--data-dir", dataDir, "--backend", `rec=${backendUrl}`, ...smallEngineArgs], {
            KVAULT_API_KEY: DEFAULT_KEY
        });
        url = await listening(server);
        rpc = await RpcSocket.connect(url, DEFAULT_KEY);
    }, 240_000);
    afterAll(async () => {
        rpc?.close();
        held.forEach(answerCompletion);
        await stopServe(server);
        backend.closeAllConnections();
        await new Promise((resolve) => backend.close(resolve));
        fs.rmSync(dataDir, { recursive: true, force: true });
    }, 60_000);

    const createKey = async (id: string): Promise<string> => (await rpc.result<{ key: string }>("createApiKey", { id })).key;
    const engineWorkspaces = async (): Promise<string[]> =>
        (await rpc.result<{ workspaces: { workspace: string }[] }>("snapshot", {})).workspaces.map(({ workspace }) => workspace);

    it("revoking a key forgets its workspaces, and a new key by the same id finds none of the old one's prompt cached", async () => {
        const prompt = {
            model: "tiny",
            user: "x",
            max_tokens: 4,
            temperature: 0,
            messages: [{ role: "user", content: "Alice's secret plan." }]
        };
        const first = await createKey("alice");
        expect((await post(url, first, prompt)).status).toBe(200);
        const again = await post(url, first, prompt);
        expect(again.json.usage!.prompt_tokens_details.cached_tokens).toBeGreaterThan(0); // her own workspace holds her prompt
        expect((await engineWorkspaces()).filter((name) => name.startsWith("api@alice"))).toHaveLength(1);

        await rpc.result("revokeApiKey", { id: "alice" });
        expect((await engineWorkspaces()).filter((name) => name.startsWith("api@alice"))).toEqual([]);
        expect(server.stderr()).toContain('Settings: API key "alice" revoked; 1 workspace(s) of it forgotten.');

        // Whoever holds the next key named alice guesses her prompt: nothing of it is cached, nothing told.
        const second = await createKey("alice");
        const guess = await post(url, second, prompt);
        expect(guess.status).toBe(200);
        expect(guess.json.usage!.prompt_tokens_details.cached_tokens).toBe(0);
        expect(guess.json.usage!.prompt_tokens).toBe(again.json.usage!.prompt_tokens);
    });

    it("sends each key's workspace upstream under a name no other key's can take, and refuses a user that is not a string", async () => {
        const alice = await createKey("alice-upstream");
        const ask = (key: string, user: unknown): Promise<Answer> =>
            post(url, key, { model: "rec/m", user, messages: [{ role: "user", content: "Hi" }] });
        const numBefore = upstreamUsers.length;
        expect((await ask(DEFAULT_KEY, "alice-upstream:x")).status).toBe(200);
        expect((await ask(alice, "x")).status).toBe(200);
        expect((await ask(DEFAULT_KEY, "plain")).status).toBe(200);
        const [asDefault, asAlice, plain] = upstreamUsers.slice(numBefore);
        expect(asDefault).not.toBe(asAlice);
        expect(asAlice).toMatch(/^alice-upstream~[0-9a-f]{16}:x$/);
        expect(asDefault).toBe(":alice-upstream:x");
        expect(plain).toBe("plain"); // the default key's names without ':' go up as they always did

        const refused = await ask(alice, { name: "x" });
        expect(refused.status).toBe(400);
        expect(refused.json.error).toMatchObject({
            type: "invalid_request_error",
            param: "user",
            message: expect.stringMatching(/^user must be a string/)
        });
        expect(upstreamUsers).toHaveLength(numBefore + 3); // the refused one never left
    });

    it("refuses a key beyond the 256 the settings keep, saying so, and keeps the 256", { timeout: 180_000 }, async () => {
        const numStored = (): number =>
            (JSON.parse(fs.readFileSync(path.join(dataDir, "settings.json"), "utf8")) as { apiKeys: unknown[] }).apiKeys.length;
        for (let index = numStored(); index < 256; index++) {
            await createKey(`bulk-${index}`);
        }
        expect(numStored()).toBe(256);
        const refused = await rpc.call("createApiKey", { id: "one-too-many" });
        expect(refused).toMatchObject({
            error: {
                code: "api_key_limit_reached",
                message:
                    'The settings hold 256 API keys, the most Kvault keeps (256); "one-too-many" was not created. Revoke a key you no longer use, then create it.'
            }
        });
        expect(numStored()).toBe(256);
    });

    it("lets a second key in while the first holds its share of the places in flight", async () => {
        await rpc.result("revokeApiKey", { id: "alice-upstream" }); // a place among the 256 for it
        const greedy = await createKey("greedy-2");
        const hold = { model: "rec/m", messages: [{ role: "user", content: HOLD }] };
        // 257 keys exist and one is busy: its share is 64 places divided among itself and one more key that may come.
        const share = 32;
        const numHeldBefore = held.length;
        const greedyAnswers = Array.from({ length: share }, () => post(url, greedy, hold));
        for (let waited = 0; waited < 600 && held.length < numHeldBefore + share; waited++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(held.length).toBe(numHeldBefore + share);

        // One more of the same key: refused, by its share. Before the fix it reached the backend (and waited there).
        const oneMore = post(url, greedy, hold);
        let outcome: Answer | "reached the backend" | undefined;
        void oneMore.then((answer) => (outcome ??= answer));
        for (let waited = 0; waited < 600 && outcome === undefined; waited++) {
            if (held.length > numHeldBefore + share) {
                outcome = "reached the backend";
            }
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(outcome).toMatchObject({
            status: 429,
            json: {
                error: {
                    code: "key_share_full",
                    message: expect.stringMatching(
                        /^The key "greedy-2" has 32 requests running or queued, its share of this server's 64 places/
                    )
                }
            }
        });

        // Another key is still let in: its request reaches the backend.
        const other = post(url, DEFAULT_KEY, hold);
        for (let waited = 0; waited < 600 && held.length < numHeldBefore + share + 1; waited++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(held.length).toBe(numHeldBefore + share + 1);
        held.splice(0).forEach(answerCompletion);
        expect((await Promise.all([...greedyAnswers, other])).map(({ status }) => status)).toEqual(Array(share + 1).fill(200));
        // Its places given back, the key is served again.
        expect((await post(url, greedy, { model: "rec/m", messages: [{ role: "user", content: "Hi" }] })).status).toBe(200);
    });
});
