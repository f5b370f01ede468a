// The live set of remote backends: replace plans what changes and swaps the set at once, a routed
// backend stays the caller's, and a workspace on a removed backend is told so by routeTurns.
import { describe, expect, it } from "vitest";
import type { ChatTurnRequest, EngineClient } from "../../../../contract/engineProtocol.js";
import type { WorkspaceMeta } from "../../../../contract/workspaces.js";
import { checkBackendEntry, type BackendConfig } from "../../../../host/backends/BackendConfig.js";
import { Backends } from "../../../../host/backends/Backends.js";
import { routeTurns } from "../../../../host/backends/routeTurns.js";

function config(name: string, url: string, extra: { key?: string; model?: string } = {}): BackendConfig {
    const checked = checkBackendEntry({ name, url, allowRemote: false, ...extra });
    if (!checked.ok) {
        throw new Error(checked.reason);
    }
    return checked.config;
}

describe("Backends.replace", () => {
    it("plans added, changed, removed and kept by name, and keeps the same backend for an unchanged configuration", () => {
        const backends = new Backends([
            config("a", "http://127.0.0.1:1"),
            config("b", "http://127.0.0.1:2"),
            config("c", "http://127.0.0.1:3")
        ]);
        const a = backends.get("a");
        const b = backends.get("b");
        const next = [
            config("a", "http://127.0.0.1:1"),
            config("b", "http://127.0.0.1:2", { key: "sk-1" }),
            config("d", "http://127.0.0.1:4")
        ];
        expect(backends.plan(next)).toEqual({ added: ["d"], changed: ["b"], removed: ["c"], kept: ["a"] });
        expect(backends.all().map((backend) => backend.name)).toEqual(["a", "b", "c"]); // a plan changes nothing
        expect(backends.replace(next)).toEqual({ added: ["d"], changed: ["b"], removed: ["c"], kept: ["a"] });
        expect(backends.all().map((backend) => backend.name)).toEqual(["a", "b", "d"]);
        expect(backends.get("a")).toBe(a);
        expect(backends.get("b")).not.toBe(b);
        expect(backends.get("b").config.key).toBe("sk-1");
        expect(b.config.key).toBeUndefined(); // a turn that got the old one runs on as it was
        expect(backends.route("d/m")).toMatchObject({ model: "m" });
        expect(backends.route("c/m")).toBeUndefined();
    });

    it("says which backends there are when one is missing, and refuses a name given twice (a bug)", () => {
        const backends = new Backends([]);
        expect(() => backends.get("gone")).toThrow(
            'There is no backend "gone" in this Kvault now (it has none). Add it in Settings › Remote backends, or start the server with --backend gone=URL; or choose another.'
        );
        backends.replace([config("a", "http://127.0.0.1:1")]);
        expect(() => backends.get("gone")).toThrow(/\(it has "a"\)/);
        expect(() => backends.replace([config("a", "http://127.0.0.1:1"), config("a", "http://127.0.0.1:2")])).toThrow(
            /the backend name "a" is given twice among 2 backends/
        );
        expect(backends.size).toBe(1);
    });
});

describe("routeTurns over a live set", () => {
    const meta: WorkspaceMeta = {
        id: "ui-1",
        name: "Drafts",
        colour: 0,
        settings: { systemPrompt: "", temperature: 0, maxTokens: 8 },
        backend: { name: "ls", model: "llama3-tiny" }
    };
    const request = { workspace: "ui-1" } as ChatTurnRequest;
    const engine = async (): Promise<EngineClient> => ({}) as EngineClient;

    it("routes to a backend added after it was made, and tells a workspace whose backend was removed what to do", async () => {
        const backends = new Backends([]);
        const route = routeTurns(engine, async () => meta, backends);
        await expect(route(request)).rejects.toMatchObject({ code: "backend_not_found" });
        backends.replace([config("ls", "http://127.0.0.1:1")]);
        await expect(route(request)).resolves.toHaveProperty("chat");
        backends.replace([]);
        await expect(route(request)).rejects.toMatchObject({
            code: "backend_not_found",
            message:
                'The workspace "Drafts" runs on backend "ls" (llama3-tiny), which this Kvault does not have now: it was not started with it, or it was removed in the settings. Add it again in Settings › Remote backends (or start the server with --backend ls=URL), or make a workspace on this computer.'
        });
    });
});
