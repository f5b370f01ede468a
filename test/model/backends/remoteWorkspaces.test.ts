import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendView, RemoteMeasurement } from "../../../contract/backends.js";
import type { LoadedWorkspaces, WorkspaceMeta } from "../../../contract/workspaces.js";
import { defaultWorkspaceSettings } from "../../../contract/workspaces.js";
import { listening, RpcSocket, smallEngineArgs, startServe, stopServe, type ServeProcess } from "../../cli/serveProcess.js";
import { ensureFamilyModel, generatedModelPath } from "../../support/generatedModels.js";
import { startLlamaServer, type LlamaServer } from "../../support/llamaServer.js";
import { freePort } from "../../unit/main/loopbackPorts.js";

// Workspaces on remote backends, end to end: Kvault's headless server (A) started with two
// backends, a real llama-server on the generated llama3-tiny (Llama 3's real tokenizer and chat
// template, random weights) and a second Kvault (B) on the tiny model, both on loopback. Chats
// run through them over A's RPC as the page runs them (streamed, stopped, kept, reopened after a
// restart), and A's own API forwards NAME/<model> requests: greedy answers equal the backend's own.
const KEY_A = "remote-key-kvault-a";
const KEY_B = "remote-key-kvault-b";
const TIMEOUT_MS = 300_000;

interface TurnEvent {
    readonly type: string;
    readonly requestId: string;
    readonly text?: string;
}

/** The turn events A's RPC sends for `requestId`, as they arrive. */
function turnEvents(rpc: RpcSocket, requestId: string): TurnEvent[] {
    const events: TurnEvent[] = [];
    rpc.onTurnEvent((event) => {
        if (event.requestId === requestId) {
            events.push(event);
        }
    });
    return events;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
    for (let waited = 0; waited < timeoutMs; waited += 50) {
        if (await condition()) {
            return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
}

async function post(url: string, body: unknown, key?: string): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
        body: JSON.stringify(body)
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const contentOf = (json: Record<string, unknown>): string =>
    ((json.choices as { message: { content: string } }[] | undefined)?.[0]?.message.content ?? "") as string;

/** A streamed answer from Kvault A's API: its text, finish reason, models named, and whether it ended with [DONE]. */
async function streamed(
    url: string,
    body: unknown,
    key: string
): Promise<{ text: string; finish: unknown; models: Set<unknown>; done: boolean }> {
    const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ ...(body as object), stream: true })
    });
    expect(response.status).toBe(200);
    const events = (await response.text()).split("\n\n").filter((event) => event.startsWith("data: "));
    let text = "";
    let finish: unknown = null;
    const models = new Set<unknown>();
    for (const event of events.slice(0, -1)) {
        const chunk = JSON.parse(event.slice(6)) as {
            model: unknown;
            choices: { delta: { content?: string | null }; finish_reason: unknown }[];
        };
        models.add(chunk.model);
        text += chunk.choices[0]?.delta.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    return { text, finish, models, done: events.at(-1) === "data: [DONE]" };
}

describe("workspaces on remote backends (llama-server and another Kvault on loopback)", () => {
    let scratch: string;
    let llama: LlamaServer;
    let kvaultB: ServeProcess;
    let urlB: string;
    let kvaultA: ServeProcess;
    let urlA: string;
    let rpc: RpcSocket;
    let downPort: number;
    const serveArgsA = (): string[] => [
        "--port",
        "0",
        "--data-dir",
        path.join(scratch, "a"),
        "--model",
        generatedModelPath("tiny"),
        ...smallEngineArgs,
        "--backend",
        `ls=${llama.url}`,
        "--backend",
        `kv=${urlB}/v1,key-env=KVAULT_B_KEY`,
        "--backend",
        `down=http://127.0.0.1:${downPort}`
    ];

    beforeAll(async () => {
        scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-remote-"));
        downPort = await freePort(); // nothing listens there: the backend "down"
        llama = await startLlamaServer(ensureFamilyModel("llama3-tiny", "f16"), [
            "--alias",
            "llama3-tiny",
            "--parallel",
            "2",
            "--ctx-size",
            "8192",
            "--metrics"
        ]);
        kvaultB = startServe(
            // paced (5 ms a token), so a Stop lands mid-answer: unpaced, the tiny model writes 400 tokens in 0.2 s
            [
                ...["--port", "0", "--data-dir", path.join(scratch, "b"), "--model", generatedModelPath("tiny"), ...smallEngineArgs],
                ...["--stream-demo", "5"]
            ],
            {
                KVAULT_API_KEY: KEY_B
            }
        );
        urlB = await listening(kvaultB);
        kvaultA = startServe(serveArgsA(), { KVAULT_API_KEY: KEY_A, KVAULT_B_KEY: KEY_B });
        urlA = await listening(kvaultA);
        rpc = await RpcSocket.connect(urlA, KEY_A);
    }, TIMEOUT_MS);

    afterAll(async () => {
        rpc?.close();
        await Promise.all([kvaultA && stopServe(kvaultA), kvaultB && stopServe(kvaultB), llama?.stop()]);
        fs.rmSync(scratch, { recursive: true, force: true });
    });

    it("lists each backend with its models and the window it states, and says why one cannot be asked", async () => {
        const { backends } = await rpc.result<{ backends: BackendView[] }>("listBackends", {});
        expect(backends.map((backend) => backend.name)).toEqual(["ls", "kv", "down"]);
        expect(backends[0]).toMatchObject({
            apiBase: `${llama.url}/v1`,
            remote: false,
            models: [{ id: "llama3-tiny", window: { tokens: 4096, source: "/v1/models meta.n_ctx (per slot)" } }]
        });
        expect(backends[1]!.models).toEqual([{ id: "tiny", window: { tokens: 512, source: "/v1/models max_model_len" } }]);
        expect(backends[2]).toMatchObject({ models: [], error: { code: "backend_unreachable" } });
        expect(backends[2]!.error!.message).toContain(
            `Backend "down" could not be reached at http://127.0.0.1:${downPort}/v1/models: ECONNREFUSED`
        );
        expect(JSON.stringify(backends)).not.toContain(KEY_B);
    });

    it.each([
        ["ls", "llama3-tiny"],
        ["kv", "tiny"]
    ])(
        "a workspace on %s chats through it: streamed, the backend's own greedy answer, kept in the chat",
        async (backend, model) => {
            const workspace: WorkspaceMeta = {
                id: `on-${backend}`,
                name: `On ${backend}`,
                colour: 1,
                settings: defaultWorkspaceSettings,
                backend: { name: backend, model }
            };
            await rpc.result("saveWorkspace", { workspace });
            const messages = [{ role: "user", content: "Tell me about pages." }];
            await rpc.result("appendMessage", { workspace: workspace.id, message: { id: "m-1", ...messages[0] } });
            const requestId = `turn-${backend}`;
            const events = turnEvents(rpc, requestId);
            const result = await rpc.result<{ text: string; finishReason: string; usage: { promptTokens: number } }>(
                "chat",
                { requestId, workspace: workspace.id, messages, sampling: { temperature: 0, maxTokens: 12 }, answerId: "m-2" },
                TIMEOUT_MS
            );
            const direct =
                backend === "ls"
                    ? await post(`${llama.url}/v1/chat/completions`, { model, messages, temperature: 0, max_tokens: 12 })
                    : await post(`${urlB}/v1/chat/completions`, { model, messages, temperature: 0, max_tokens: 12 }, KEY_B);
            expect(direct.status).toBe(200);
            expect(result.text).not.toBe("");
            expect(result.text).toBe(contentOf(direct.json));
            expect(result.usage.promptTokens).toBe((direct.json.usage as { prompt_tokens: number }).prompt_tokens);
            expect(
                events
                    .filter((event) => event.type === "text")
                    .map((event) => event.text)
                    .join("")
            ).toBe(result.text);
            const loaded = await rpc.result<LoadedWorkspaces>("loadWorkspaces", {});
            const kept = loaded.workspaces.find((candidate) => candidate.id === workspace.id)!;
            expect(kept.backend).toEqual({ name: backend, model });
            expect(kept.messages.map((message) => [message.id, message.content])).toEqual([
                ["m-1", messages[0]!.content],
                ["m-2", result.text]
            ]);
        },
        TIMEOUT_MS
    );

    it(
        "the meter of a workspace on a backend: the server's own token count and window, each with its source, or why not",
        async () => {
            const conversation = [
                { role: "user", content: "Tell me about pages." },
                { role: "assistant", content: "They hold KV." }
            ];
            const draft = "And sequences?";
            const onLs = await rpc.result<RemoteMeasurement>("measureRemote", { workspace: "on-ls", messages: conversation, draft });
            const counted = await post(`${llama.url}/v1/chat/completions`, {
                model: "llama3-tiny",
                messages: [...conversation, { role: "user", content: draft }],
                max_tokens: 1
            });
            const promptTokens = (counted.json.usage as { prompt_tokens: number }).prompt_tokens;
            expect(onLs.tokens).toMatchObject({ kind: "known", source: "llama.cpp /apply-template + /tokenize" });
            const tokens = onLs.tokens as { usedTokens: number; draftTokens: number };
            expect(tokens.usedTokens + tokens.draftTokens).toBe(promptTokens);
            expect(tokens.draftTokens).toBeGreaterThan(0);
            expect(onLs.window).toEqual({ kind: "known", source: "/v1/models meta.n_ctx (per slot)", tokens: 4096 });
            // This llama-server release exports no KV cache gauge on /metrics: the meter says so.
            expect(onLs.kvUsage).toMatchObject({ kind: "unknown", reason: expect.stringContaining("has no KV cache gauge") });

            const onKv = await rpc.result<RemoteMeasurement>("measureRemote", { workspace: "on-kv", messages: conversation, draft });
            // another Kvault counts with its /tokenize in vLLM's chat shape, as its own chat turn's prompt would be
            const countedOnB = await post(
                `${urlB}/v1/chat/completions`,
                { model: "tiny", messages: [...conversation, { role: "user", content: draft }], max_tokens: 1 },
                KEY_B
            );
            expect(onKv.tokens).toMatchObject({ kind: "known", source: "vLLM /tokenize (messages)" });
            const tokensOnKv = onKv.tokens as { usedTokens: number; draftTokens: number };
            expect(tokensOnKv.usedTokens + tokensOnKv.draftTokens).toBe((countedOnB.json.usage as { prompt_tokens: number }).prompt_tokens);
            expect(tokensOnKv.draftTokens).toBeGreaterThan(0);
            expect(onKv.window).toEqual({ kind: "known", source: "/v1/models max_model_len", tokens: 512 });
            expect(onKv.kvUsage).toMatchObject({ kind: "known", source: "Kvault /metrics kvault_pages (the host page pool)" });
            const ratio = (onKv.kvUsage as { ratio: number }).ratio;
            expect(ratio).toBeGreaterThanOrEqual(0);
            expect(ratio).toBeLessThanOrEqual(1);

            const local = await rpc.call("measureRemote", { workspace: "ui-none", messages: [], draft: "x" });
            expect("error" in local && local.error.message).toMatch(/runs on this computer/);
        },
        TIMEOUT_MS
    );

    it.each(["ls", "kv"] as const)(
        "Stop mid-answer on %s aborts the request upstream and keeps what streamed as a stopped answer",
        async (backend) => {
            const workspace: WorkspaceMeta = {
                id: `stopped-on-${backend}`,
                name: "Stopped",
                colour: 2,
                settings: defaultWorkspaceSettings,
                backend: { name: backend, model: backend === "ls" ? "llama3-tiny" : "tiny" }
            };
            await rpc.result("saveWorkspace", { workspace });
            const messages = [{ role: "user", content: "Write a very long story." }];
            await rpc.result("appendMessage", { workspace: workspace.id, message: { id: "q-1", ...messages[0] } });
            // What the backend says it did: llama-server's predicted tokens and busy slots, the other Kvault's generated tokens and cancelled requests
            const metric = async (url: string, pattern: RegExp, key?: string): Promise<number> =>
                Number(
                    pattern.exec(
                        await (
                            await fetch(`${url}/metrics`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } })
                        ).text()
                    )?.[1] ?? 0
                );
            const generated = (): Promise<number> =>
                backend === "ls"
                    ? metric(llama.url, /^llamacpp:tokens_predicted_total (\d+)/m)
                    : metric(urlB, /^kvault_tokens_total\{kind="generated"\} (\d+)/m, KEY_B);
            const cancelled = (): Promise<number> => metric(urlB, /^kvault_requests_total\{outcome="cancelled"\} (\d+)/m, KEY_B);
            const before = await generated();
            const cancelledBefore = await cancelled();
            const requestId = `turn-stopped-${backend}`;
            const events = turnEvents(rpc, requestId);
            // Unstopped, the answer would run until the slot (4,096) or the window (512) is full: random weights rarely say end of text.
            const maxTokens = backend === "ls" ? 100_000 : 400;
            const answer = rpc.call(
                "chat",
                { requestId, workspace: workspace.id, messages, sampling: { temperature: 0, maxTokens }, answerId: "a-1" },
                TIMEOUT_MS
            );
            const endedFirst = answer.then((ended) => {
                throw new Error(`The turn ended before its first text: ${JSON.stringify(ended).slice(0, 400)}`);
            });
            await Promise.race([until(() => events.some((event) => event.type === "text"), "the first text"), endedFirst]);
            endedFirst.catch(() => undefined);
            await rpc.result("cancel", { requestId });
            const reply = await answer;
            expect("error" in reply && reply.error.code).toBe("turn_stopped");
            if (backend === "ls") {
                const slots = async (): Promise<boolean> =>
                    ((await (await fetch(`${llama.url}/slots`)).json()) as { is_processing: boolean }[]).every(
                        (slot) => !slot.is_processing
                    );
                await until(slots, "llama-server's slots going idle after the Stop");
                const numGenerated = (await generated()) - before;
                expect(numGenerated).toBeGreaterThan(0);
                expect(numGenerated).toBeLessThan(3_000);
            } else {
                // the other Kvault's request ended as cancelled, not finished: the Stop reached it
                await until(async () => (await cancelled()) === cancelledBefore + 1, "the other Kvault counting its request cancelled");
                expect((await generated()) - before).toBeGreaterThan(0);
            }
            const loaded = await rpc.result<LoadedWorkspaces>("loadWorkspaces", {});
            const kept = loaded.workspaces.find((candidate) => candidate.id === workspace.id)!;
            const streamedText = events
                .filter((event) => event.type === "text")
                .map((event) => event.text)
                .join("");
            expect(kept.messages.at(-1)).toMatchObject({ id: "a-1", finish: "stopped", content: streamedText });
        },
        TIMEOUT_MS
    );

    it(
        "Kvault's API as a gateway: /v1/models lists NAME/<model>, and answers (streamed and not) equal the backend's own",
        async () => {
            const listed = (await (await fetch(`${urlA}/v1/models`, { headers: { authorization: `Bearer ${KEY_A}` } })).json()) as {
                data: { id: string; max_model_len?: number }[];
            };
            expect(listed.data.map((entry) => entry.id)).toEqual(["tiny", "ls/llama3-tiny", "kv/tiny"]);
            expect(listed.data[1]!.max_model_len).toBe(4096);
            const messages = [{ role: "user", content: "What is a KV cache?" }];
            for (const [asked, url, key, model] of [
                ["ls/llama3-tiny", llama.url, undefined, "llama3-tiny"],
                ["kv/tiny", urlB, KEY_B, "tiny"]
            ] as const) {
                const body = { messages, temperature: 0, max_tokens: 10 };
                const direct = await post(`${url}/v1/chat/completions`, { ...body, model }, key);
                const gateway = await post(`${urlA}/v1/chat/completions`, { ...body, model: asked }, KEY_A);
                expect(gateway.status).toBe(200);
                expect(gateway.json.model).toBe(asked);
                expect(contentOf(gateway.json)).toBe(contentOf(direct.json));
                expect(contentOf(gateway.json)).not.toBe("");
                const stream = await streamed(`${urlA}/v1/chat/completions`, { ...body, model: asked }, KEY_A);
                expect(stream).toMatchObject({ text: contentOf(direct.json), finish: "length", done: true });
                expect([...stream.models]).toEqual([asked]);
            }
        },
        TIMEOUT_MS
    );

    it("the gateway's failures: the backend's 400 stays a 400, an unreachable one is a 502, a wrong key a 401", async () => {
        const tooLong = await post(
            `${urlA}/v1/chat/completions`,
            { model: "kv/tiny", messages: [{ role: "user", content: "word ".repeat(2_000) }], max_tokens: 4 },
            KEY_A
        );
        expect(tooLong.status).toBe(400);
        expect(JSON.stringify(tooLong.json)).toMatch(/Backend \\"kv\\" answered 400/);
        const down = await post(`${urlA}/v1/chat/completions`, { model: "down/x", messages: [{ role: "user", content: "Hi" }] }, KEY_A);
        expect(down.status).toBe(502);
        expect((down.json.error as { code: string }).code).toBe("backend_unreachable");
        const wrongKey = await post(`${urlA}/v1/chat/completions`, { model: "ls/llama3-tiny", messages: [] }, "not-the-key");
        expect(wrongKey.status).toBe(401);
    });

    it(
        "after a restart the workspaces reopen on their backends, with their chats, and chat on",
        async () => {
            rpc.close();
            await stopServe(kvaultA);
            kvaultA = startServe(serveArgsA(), { KVAULT_API_KEY: KEY_A, KVAULT_B_KEY: KEY_B });
            urlA = await listening(kvaultA);
            rpc = await RpcSocket.connect(urlA, KEY_A);
            const loaded = await rpc.result<LoadedWorkspaces>("loadWorkspaces", {});
            const onLs = loaded.workspaces.find((candidate) => candidate.id === "on-ls")!;
            expect(onLs.backend).toEqual({ name: "ls", model: "llama3-tiny" });
            expect(onLs.messages.map((message) => message.id)).toEqual(["m-1", "m-2"]);
            const onKv = loaded.workspaces.find((candidate) => candidate.id === "on-kv")!;
            expect(onKv.backend).toEqual({ name: "kv", model: "tiny" });
            // The second turn sends the first answer back: llama-server's Llama 3 output parser refuses some
            // random-weight text as a prompt's answer, so it continues on Kvault B, which takes any.
            const messages = [...onKv.messages.map(({ role, content }) => ({ role, content })), { role: "user", content: "And then?" }];
            await rpc.result("appendMessage", { workspace: "on-kv", message: { id: "m-3", role: "user", content: "And then?" } });
            const result = await rpc.result<{ text: string }>(
                "chat",
                {
                    requestId: "turn-after-restart",
                    workspace: "on-kv",
                    messages,
                    sampling: { temperature: 0, maxTokens: 8 },
                    answerId: "m-4"
                },
                TIMEOUT_MS
            );
            const direct = await post(`${urlB}/v1/chat/completions`, { model: "tiny", messages, temperature: 0, max_tokens: 8 }, KEY_B);
            expect(result.text).toBe(contentOf(direct.json));
        },
        TIMEOUT_MS
    );
});
