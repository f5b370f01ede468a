import { afterAll, describe, expect, it } from "vitest";
import { KvaultHttpServer } from "../../../host/http/KvaultHttpServer.js";
import { EngineSupervisor } from "../../../host/supervisor/EngineSupervisor.js";
import { RecordingSpawner, isProcessAlive, stateDirectoriesOf, tinyProcessConfig, waitUntil } from "../process/supervisorFixtures.js";

const API_KEY = "test-key-0123456789";
/** Short, for the test: a ping every 200 ms, and one unanswered for 2 s means frozen (not less: a loaded CI machine can stall a second). */
const PING_INTERVAL_MS = 200;
const PING_DEADLINE_MS = 2_000;
/** How long the test waits for a state it expects: well past interval + deadline + a tiny model's start. */
const WAIT_MS = 30_000;

interface HealthBody {
    readonly status: string;
    readonly state: string;
    readonly reason: string;
    readonly error?: { readonly code: string; readonly message: string };
}

describe("liveness: an engine process frozen with SIGSTOP", () => {
    const spawner = new RecordingSpawner({ quiet: true });
    let supervisor: EngineSupervisor | undefined;
    let server: KvaultHttpServer | undefined;
    afterAll(async () => {
        await server?.close();
        await supervisor?.dispose();
        for (const pid of spawner.pids) {
            try {
                process.kill(pid, "SIGKILL"); // a stopped process the test left behind, if it failed half-way
            } catch {
                // gone already
            }
        }
    });

    it("turns /health 503, ends the chat in flight with engine_unresponsive, restarts the engine, and fails for good once the budget is spent", async () => {
        supervisor = await EngineSupervisor.start(tinyProcessConfig, {
            spawner,
            pingIntervalMs: PING_INTERVAL_MS,
            pingDeadlineMs: PING_DEADLINE_MS,
            maxRestarts: 1,
            restartWindowMs: 600_000,
            log: () => undefined
        });
        const engine = supervisor;
        server = new KvaultHttpServer({
            engine,
            apiKey: API_KEY,
            host: "127.0.0.1",
            port: 0,
            modelId: "tiny",
            health: () => engine.health()
        });
        const { url } = await server.listen();
        const health = async (): Promise<{ status: number; body: HealthBody }> => {
            const response = await fetch(`${url}/health`);
            return { status: response.status, body: (await response.json()) as HealthBody };
        };
        const chat = (content: string): Promise<Response> =>
            fetch(`${url}/v1/chat/completions`, {
                method: "POST",
                headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
                body: JSON.stringify({ model: "tiny", messages: [{ role: "user", content }], max_tokens: 4, temperature: 0 })
            });
        const waitForHealth = async (state: string): Promise<HealthBody> => {
            let last: { status: number; body: HealthBody } | undefined;
            const deadline = performance.now() + WAIT_MS;
            while (performance.now() < deadline) {
                last = await health();
                if (last.body.state === state) {
                    return last.body;
                }
                await new Promise((resolve) => setTimeout(resolve, 50));
            }
            throw new Error(`/health did not say "${state}" within ${WAIT_MS} ms; it last said ${JSON.stringify(last)}.`);
        };

        expect(await health()).toEqual({
            status: 200,
            body: {
                status: "ok",
                state: "ready",
                reason: expect.any(String),
                compute: expect.objectContaining({ backend: "cpu", binary: "local build" })
            }
        });
        expect((await chat("Before.")).status).toBe(200);
        const firstPid = engine.pid!;

        // Frozen: the process exists but answers nothing. A chat sent now would hang for the request limit (10 min).
        process.kill(firstPid, "SIGSTOP");
        const meanwhile = chat("While frozen.");
        const frozen = await waitForHealth("restarting");
        expect(frozen.reason).toBe(
            `Engine process ${firstPid} did not answer a liveness ping within 2 s, so it was killed; it is restarting.`
        );
        expect((await health()).status).toBe(503);
        const failed = await meanwhile;
        expect(failed.status).toBe(503);
        expect(((await failed.json()) as { error: { code: string; message: string } }).error).toEqual({
            code: "engine_unresponsive",
            message:
                "The engine process did not answer for 2 s (a liveness ping went unanswered), so Kvault stopped it and is restarting it. " +
                "Nothing more will be generated for this turn; send your message again in a moment — your chat history is kept.",
            type: "server_error",
            param: null
        });

        // Restarted: a new process, /health 200 again, and the next chat is answered.
        await waitForHealth("ready");
        const secondPid = engine.pid!;
        expect(secondPid).not.toBe(firstPid);
        expect(isProcessAlive(firstPid)).toBe(false);
        expect(stateDirectoriesOf(firstPid)).toEqual([]); // the new engine swept the killed one's
        const after = await chat("After.");
        expect(after.status).toBe(200);
        expect(
            ((await after.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content.length
        ).toBeGreaterThan(0);
        expect(engine.numRestarts).toBe(1);

        // Frozen again, with the budget (one restart) spent: failed, for good.
        process.kill(secondPid, "SIGSTOP");
        const gaveUp = await waitForHealth("failed");
        expect(gaveUp.error?.code).toBe("engine_unavailable");
        expect(gaveUp.reason).toMatch(/after 1 restarts within 600 s, so Kvault stopped restarting it\. Check the model/);
        const down = await health();
        expect(down.status).toBe(503);
        expect(down.body.status).toBe("failed");
        const refused = await chat("Anyone?");
        expect(refused.status).toBe(503);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("engine_unavailable");
        await waitUntil(() => !isProcessAlive(secondPid), WAIT_MS, `engine process ${secondPid} to be gone`);
        expect(spawner.pids).toEqual([firstPid, secondPid]);
    });
});
