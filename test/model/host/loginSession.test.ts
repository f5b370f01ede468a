import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { localEngine } from "../../../engine/process/localEngine.js";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { hostMethods } from "../../../host/rpc/hostMethods.js";
import { RpcDispatcher } from "../../../host/rpc/RpcDispatcher.js";
import { RpcServer } from "../../../host/rpc/RpcServer.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "login-test-key-0001";

/**
 * Opens the RPC WebSocket as a page of `origin` (the server's own unless given; null: none, as a
 * replay from outside a browser) would; resolves with the result of an `info` call, or rejects with
 * the server's refusal.
 */
async function rpcInfo(url: string, options: { cookie?: string; key?: string; token?: string; origin?: string | null }): Promise<unknown> {
    const query = options.key !== undefined ? `?key=${options.key}` : options.token !== undefined ? `?session_token=${options.token}` : "";
    const origin = options.origin === undefined ? url : options.origin;
    const socket = new WebSocket(`${url.replace("http", "ws")}/rpc${query}`, {
        ...(origin === null ? {} : { origin }),
        headers: options.cookie === undefined ? {} : { Cookie: options.cookie }
    });
    try {
        await new Promise<void>((resolve, reject) => {
            socket.once("open", () => resolve());
            socket.once("error", reject);
        });
        const answer = new Promise<unknown>((resolve) =>
            socket.on("message", (data) => {
                const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
                if (message.id === 1) {
                    resolve(message.result);
                }
            })
        );
        socket.send(JSON.stringify({ id: 1, method: "info", params: {} }));
        return await answer;
    } finally {
        socket.close();
    }
}

// The page is public; the login link is not. Whoever can see the server's stdout logs a browser
// in with a one-time link; any other local process that fetches the page gets no secret, and
// cannot open the RPC that reads every chat.
describe("logging a browser in with a one-time link (headless mode)", () => {
    let api: InProcessApiServer;
    let rpc: RpcServer;
    let url: string;
    let port: number;
    const links: string[] = [];
    /** The login sessions' clock, which a test moves past their lifetimes. */
    const clock = { now: Date.now() };
    const rendererDirectory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-renderer-"));

    beforeAll(async () => {
        fs.writeFileSync(
            path.join(rendererDirectory, "index.html"),
            "<!doctype html><html><head><title>Kvault</title></head><body></body></html>"
        );
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: {
                rendererDirectory,
                onLoginLink: (link) => links.push(link),
                loginSessions: { now: () => clock.now },
                // the RPC server is made below, over the engine this call starts, before any test opens a socket
                onRpcUpgrade: (request, socket, head) => rpc.handleUpgrade(request, socket, head),
                requestTimeoutMs: httpDefaults.requestTimeoutMs
            }
        });
        const engine = localEngine(api.service);
        rpc = new RpcServer(
            new RpcDispatcher(
                async () => engine,
                hostMethods({ engine: async () => engine, models: () => Promise.reject(new Error("This test serves no model manager.")) })
            )
        );
        url = api.url;
        port = api.port;
        links.push(api.loginLink!);
    });
    afterAll(async () => {
        await rpc.close();
        await api?.close();
        fs.rmSync(rendererDirectory, { recursive: true, force: true });
    });

    const login = (link: string, cookie?: string): Promise<Response> =>
        fetch(link, { redirect: "manual", headers: cookie === undefined ? {} : { Cookie: cookie } });
    const sessionCookie = (response: Response): string => response.headers.get("set-cookie")!.split(";")[0]!;
    /** The RPC token the login's redirect hands the page in the address's fragment. */
    const rpcToken = (response: Response): string => /#kvault-session-token=([0-9a-f]{64})$/.exec(response.headers.get("location")!)![1]!;
    const logOut = (options: { cookie: string; token: string; origin?: string }): Promise<Response> =>
        fetch(`${url}/logout`, {
            method: "POST",
            headers: { Cookie: options.cookie, "X-Kvault-Session-Token": options.token, Origin: options.origin ?? url }
        });

    it("serves a page that carries no secret: not the API key, not a login token", async () => {
        expect(links).toHaveLength(1);
        expect(links[0]).toMatch(new RegExp(`^${url}/\\?token=[0-9a-f]{64}$`));
        const page = await (await fetch(`${url}/`)).text();
        expect(page).not.toContain(API_KEY);
        expect(page).not.toContain(new URL(links[0]!).searchParams.get("token"));
        expect(page).toContain('<meta name="kvault-session" content="none">');
    });

    it("trades the link for an HttpOnly, SameSite=Strict session cookie and an RPC token in the fragment of the address it sends the browser to", async () => {
        const response = await login(links.at(-1)!);
        expect(response.status).toBe(303);
        expect(response.headers.get("location")).toMatch(/^\/#kvault-session-token=[0-9a-f]{64}$/);
        expect(response.headers.get("cache-control")).toBe("no-store");
        expect(response.headers.get("set-cookie")).toMatch(
            new RegExp(`^kvault_session_${port}_[0-9a-f]{8}=[0-9a-f]{64}; Path=/; HttpOnly; SameSite=Strict$`)
        );
        const page = await (await fetch(`${url}/`, { headers: { Cookie: sessionCookie(response) } })).text();
        expect(page).toContain('<meta name="kvault-session" content="active">');
        expect(page).not.toContain(API_KEY);
        expect(page).not.toContain(rpcToken(response));
        expect(await rpcInfo(url, { cookie: sessionCookie(response), token: rpcToken(response) })).toMatchObject({
            modelName: expect.any(String)
        });
    });

    it("refuses the session cookie alone, as another loopback server that received it would replay it: no Origin, another port's, or no RPC token", async () => {
        const response = await login(links.at(-1)!);
        const cookie = sessionCookie(response);
        await expect(rpcInfo(url, { cookie, origin: null })).rejects.toThrow("Unexpected server response: 403");
        await expect(rpcInfo(url, { cookie, token: rpcToken(response), origin: null })).rejects.toThrow("Unexpected server response: 403");
        await expect(rpcInfo(url, { cookie, token: rpcToken(response), origin: `http://127.0.0.1:${port + 1}` })).rejects.toThrow(
            "Unexpected server response: 403"
        );
        await expect(rpcInfo(url, { cookie })).rejects.toThrow("Unexpected server response: 401");
        await expect(rpcInfo(url, { cookie, token: "0".repeat(64) })).rejects.toThrow("Unexpected server response: 401");
        expect(await rpcInfo(url, { cookie, token: rpcToken(response) })).toMatchObject({ modelName: expect.any(String) });
    });

    it("logs out: the cookie is cleared, the session's open RPC connection closes, and the old cookie and token open nothing", async () => {
        const response = await login(links.at(-1)!);
        const session = { cookie: sessionCookie(response), token: rpcToken(response) };
        const open = new WebSocket(`${url.replace("http", "ws")}/rpc?session_token=${session.token}`, {
            origin: url,
            headers: { Cookie: session.cookie }
        });
        await new Promise<void>((resolve, reject) => {
            open.once("open", () => resolve());
            open.once("error", reject);
        });
        const closed = new Promise<void>((resolve) => open.once("close", () => resolve()));

        // Only the page itself may log out: not a replay of the cookie without its token, not another origin.
        expect((await logOut({ cookie: session.cookie, token: "" })).status).toBe(401);
        expect((await logOut({ ...session, origin: `http://127.0.0.1:${port + 1}` })).status).toBe(403);
        const out = await logOut(session);
        expect(out.status).toBe(204);
        expect(out.headers.get("set-cookie")).toBe(`${session.cookie.split("=")[0]}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
        await closed;
        await expect(rpcInfo(url, { ...session })).rejects.toThrow("Unexpected server response: 401");
        const page = await (await fetch(`${url}/`, { headers: { Cookie: session.cookie } })).text();
        expect(page).toContain('<meta name="kvault-session" content="none">');
        expect((await logOut(session)).status).toBe(401);
    });

    it("ends a session unused for 12 hours, and any session 7 days after its login with its open RPC connection", async () => {
        const idle = await login(links.at(-1)!);
        clock.now += 12 * 60 * 60 * 1000;
        await expect(rpcInfo(url, { cookie: sessionCookie(idle), token: rpcToken(idle) })).rejects.toThrow(
            "Unexpected server response: 401"
        );

        const busy = await login(links.at(-1)!);
        const open = new WebSocket(`${url.replace("http", "ws")}/rpc?session_token=${rpcToken(busy)}`, {
            origin: url,
            headers: { Cookie: sessionCookie(busy) }
        });
        await new Promise<void>((resolve, reject) => {
            open.once("open", () => resolve());
            open.once("error", reject);
        });
        const closed = new Promise<void>((resolve) => open.once("close", () => resolve()));
        clock.now += 6 * 24 * 60 * 60 * 1000; // in use all along: an open connection is never idle
        expect(await rpcInfo(url, { cookie: sessionCookie(busy), token: rpcToken(busy) })).toMatchObject({
            modelName: expect.any(String)
        });
        clock.now += 24 * 60 * 60 * 1000;
        expect((await fetch(`${url}/health`)).status).toBe(200); // any request ends what is past its lifetime
        await closed;
        await expect(rpcInfo(url, { cookie: sessionCookie(busy), token: rpcToken(busy) })).rejects.toThrow(
            "Unexpected server response: 401"
        );
    });

    it("lets each link in once, and prints the next one", async () => {
        const first = links.at(-1)!;
        const numLinks = links.length;
        expect((await login(first)).status).toBe(303);
        expect(links).toHaveLength(numLinks + 1);
        expect(links.at(-1)).not.toBe(first);

        const again = await login(first);
        expect(again.status).toBe(403);
        expect(again.headers.get("set-cookie")).toBeNull();
        expect(await again.text()).toContain("This login link was used already");
        expect(links).toHaveLength(numLinks + 1);

        const next = await login(links.at(-1)!);
        expect(next.status).toBe(303);
        // A browser with a session that opens an old link is just sent on to the app.
        const stale = await login(first, sessionCookie(next));
        expect(stale.status).toBe(303);
        expect(stale.headers.get("set-cookie")).toBeNull();
    });

    it("opens the RPC WebSocket only with a session cookie and its RPC token, or the API key for API clients", async () => {
        await expect(rpcInfo(url, {})).rejects.toThrow("Unexpected server response: 401");
        await expect(rpcInfo(url, { cookie: `kvault_session_${port}=${"0".repeat(64)}`, token: "0".repeat(64) })).rejects.toThrow(
            "Unexpected server response: 401"
        );
        await expect(rpcInfo(url, { key: "not-the-key" })).rejects.toThrow("Unexpected server response: 401");
        // A session of another Kvault server (another port) is not this one's.
        const response = await login(links.at(-1)!);
        const cookie = sessionCookie(response).replace(`kvault_session_${port}_`, `kvault_session_${port + 1}_`);
        await expect(rpcInfo(url, { cookie, token: rpcToken(response) })).rejects.toThrow("Unexpected server response: 401");
        expect(await rpcInfo(url, { key: API_KEY })).toMatchObject({ modelName: expect.any(String) });
    });

    it("keeps the OpenAI API on Bearer keys: a session cookie is not a key", async () => {
        const response = await login(links.at(-1)!);
        expect((await fetch(`${url}/v1/models`, { headers: { Cookie: sessionCookie(response) } })).status).toBe(401);
        expect((await fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${API_KEY}` } })).status).toBe(200);
    });
});
