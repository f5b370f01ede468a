import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { LoadedWorkspaces, StoredMessage, WorkspaceMeta } from "../../contract/workspaces.js";
import { defaultWorkspaceSettings } from "../../contract/workspaces.js";
import { WorkspaceStore } from "../../host/store/WorkspaceStore.js";
import { listening, RpcSocket, smallEngineArgs, startServe, stopServe, type ServeProcess } from "./serveProcess.js";

// Issue 14, item 4: two servers on one data directory silently lost acknowledged writes. Now the
// first one owns it: a second refuses to start, naming the first's pid and the directory; once
// the first is killed (SIGKILL: its lock left behind), the next one takes the stale lock over.
// Nothing either acknowledged is lost: the data directory, reopened, holds every write.
const API_KEY = "lock-test-key-1";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-lock-cli-"));
const started: ServeProcess[] = [];
afterAll(async () => {
    for (const server of started) {
        server.child.kill("SIGKILL");
        await server.exit;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
});

function serve(): ServeProcess {
    const server = startServe(["--port", "0", "--data-dir", dataDir, ...smallEngineArgs], { KVAULT_API_KEY: API_KEY });
    started.push(server);
    return server;
}

const alpha: WorkspaceMeta = { id: "ui-alpha", name: "Alpha", colour: 1, settings: defaultWorkspaceSettings };
const doomed: WorkspaceMeta = { id: "ui-doomed", name: "To delete", colour: 3, settings: defaultWorkspaceSettings };
const message = (index: number): StoredMessage => ({
    id: `m-${index}`,
    role: index % 2 === 0 ? "user" : "assistant",
    content: `message ${index} ✓`
});

describe("the data directory has one owner (npm run serve --data-dir)", () => {
    it("a second server refuses with the holder's pid and the directory; after the first is killed, the next takes over and nothing acknowledged is lost", async () => {
        const first = serve();
        const firstRpc = await RpcSocket.connect(await listening(first), API_KEY);
        await firstRpc.result("saveWorkspace", { workspace: alpha });
        await firstRpc.result("saveWorkspace", { workspace: doomed });
        for (const index of [1, 2]) {
            await firstRpc.result("appendMessage", { workspace: alpha.id, message: message(index) });
        }

        const second = serve();
        // Today's fix or not, it ends one way or the other: refused, or (the bug) listening beside the first.
        const refusal = await Promise.race([
            second.exit,
            listening(second).then(
                (url) => ({ listeningBesideTheFirst: url }),
                () => second.exit
            )
        ]);
        expect(refusal, second.stderr()).toEqual({ code: 1, signal: null });
        expect(second.stdout).toEqual([]);
        expect(second.stderr()).toContain(`The data directory ${dataDir} is in use by another Kvault (npm run serve, pid ${first.pid},`);

        // The first keeps serving, and writing, while the second is refused.
        await firstRpc.result("saveWorkspace", { workspace: { ...alpha, name: "Alpha, renamed" } });
        await firstRpc.result("appendMessage", { workspace: alpha.id, message: message(3) });
        firstRpc.close();
        first.child.kill("SIGKILL");
        expect(await first.exit).toEqual({ code: null, signal: "SIGKILL" });
        expect(fs.existsSync(path.join(dataDir, "kvault.lock")), "SIGKILL leaves the lock behind").toBe(true);

        const third = serve();
        const thirdRpc = await RpcSocket.connect(await listening(third), API_KEY);
        expect(third.stderr()).toContain(
            `The data directory ${dataDir} was held by npm run serve (pid ${first.pid}), which is no longer running; took it over.`
        );
        const seen = await thirdRpc.result<LoadedWorkspaces>("loadWorkspaces", {});
        expect(seen.workspaces.map(({ id, name }) => ({ id, name }))).toEqual([
            { id: alpha.id, name: "Alpha, renamed" },
            { id: doomed.id, name: doomed.name }
        ]);
        expect(seen.workspaces[0]!.messages).toEqual([1, 2, 3].map(message));
        await thirdRpc.result("removeWorkspace", { workspace: doomed.id });
        await thirdRpc.result("appendMessage", { workspace: alpha.id, message: message(4) });
        thirdRpc.close();
        expect(await stopServe(third)).toEqual({ code: 0, signal: null });
        expect(fs.existsSync(path.join(dataDir, "kvault.lock")), "a clean stop gives the directory up").toBe(false);

        // Reopened as the next start would: every acknowledged write of both servers, nothing set aside.
        const store = await WorkspaceStore.open(dataDir);
        const { workspaces, problems } = await store.load();
        await store.close();
        expect(problems).toEqual([]);
        expect(workspaces.map(({ id, name }) => ({ id, name }))).toEqual([{ id: alpha.id, name: "Alpha, renamed" }]);
        expect(workspaces[0]!.messages).toEqual([1, 2, 3, 4].map(message));
    }, 240_000);
});
