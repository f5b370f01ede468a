import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { EngineCommand } from "../../../../contract/engineProtocol.js";
import { EngineSupervisor } from "../../../../host/supervisor/EngineSupervisor.js";
import { ENGINE_CONFIG_ENV } from "../../../../engine/process/readEngineProcessConfig.js";
import {
    ENGINE_SERVICE_NAME,
    UtilityEngineProcess,
    type UtilityChild,
    type UtilityForkOptions
} from "../../../../main/engine/UtilityEngineProcess.js";

/** A stand-in for Electron's UtilityProcess: an emitter with piped stdout/stderr. */
class FakeUtilityChild extends EventEmitter implements UtilityChild {
    pid: number | undefined = 4242;
    readonly stdout = new PassThrough();
    readonly stderr = new PassThrough();
    readonly posted: unknown[] = [];
    numKills = 0;
    throwOnPost = false;

    postMessage(message: unknown): void {
        if (this.throwOnPost) {
            throw new Error("Child process not running");
        }
        this.posted.push(message);
    }

    kill(): boolean {
        this.numKills++;
        return true;
    }

    /** Ends the process as Electron reports it: 'exit' first, the pipes close after. */
    exit(code: number, options: { closePipes?: boolean } = {}): void {
        this.emit("exit", code);
        if (options.closePipes !== false) {
            setTimeout(() => {
                this.stdout.end();
                this.stderr.end();
            }, 5);
        }
    }
}

const chat: EngineCommand = { type: "call", callId: "c1", method: "snapshot", params: {} };
const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function adapt(options: { drainMs?: number } = {}): { child: FakeUtilityChild; engine: UtilityEngineProcess; output: string[] } {
    const child = new FakeUtilityChild();
    const output: string[] = [];
    return {
        child,
        output,
        engine: new UtilityEngineProcess(child, { onOutput: (chunk) => output.push(chunk), drainMs: options.drainMs ?? 1_000 })
    };
}

describe("UtilityEngineProcess", () => {
    it("sends commands with postMessage and delivers messages as they come", () => {
        const { child, engine } = adapt();
        const received: unknown[] = [];
        engine.on("message", (message) => received.push(message));
        engine.send(chat);
        child.emit("message", { type: "ready", info: {} });
        expect(child.posted).toEqual([chat]);
        expect(received).toEqual([{ type: "ready", info: {} }]);
        expect(engine.pid).toBe(4242);
    });

    it("reports the exit once, with the code and no signal, after stderr has drained", async () => {
        const { child, engine } = adapt();
        const exits: unknown[] = [];
        engine.on("exit", (code, signal) => exits.push([code, signal, engine.recentOutput()]));
        child.exit(3, { closePipes: false });
        child.stderr.write("GGML_ASSERT failed\n"); // the last words arrive after 'exit'
        child.exit(3, { closePipes: false });
        await tick(5);
        expect(exits).toEqual([]);
        child.stdout.end();
        child.stderr.end();
        await tick(5);
        expect(exits).toEqual([[3, null, "GGML_ASSERT failed\n"]]);
    });

    it("does not wait for pipes that never close longer than drainMs", async () => {
        const { child, engine } = adapt({ drainMs: 20 });
        const exits: unknown[] = [];
        engine.on("exit", (code) => exits.push(code));
        child.exit(0, { closePipes: false });
        await tick(5);
        expect(exits).toEqual([]);
        await tick(40);
        expect(exits).toEqual([0]);
    });

    it("keeps the tail of stderr to quote, and forwards stdout and stderr", async () => {
        const { child, engine, output } = adapt();
        child.stdout.write("loading\n");
        child.stderr.write("x".repeat(5_000));
        child.stderr.write("the end");
        await tick();
        expect(engine.recentOutput()).toHaveLength(4_000);
        expect(engine.recentOutput().endsWith("the end")).toBe(true);
        expect(output[0]).toBe("loading\n");
        expect(output.join("")).toContain("the end");
    });

    it("drops commands once the process has exited, and never throws from send", async () => {
        const { child, engine, output } = adapt();
        child.throwOnPost = true;
        expect(() => engine.send(chat)).not.toThrow();
        expect(output.join("")).toMatch(/could not send a call command: Child process not running/);
        child.throwOnPost = false;
        child.exit(0);
        engine.send(chat);
        expect(child.posted).toEqual([]);
    });

    it("kills the process once, and not after it has exited", () => {
        const { child, engine } = adapt();
        engine.kill("SIGKILL");
        expect(child.numKills).toBe(1);
        child.exit(1);
        engine.kill();
        expect(child.numKills).toBe(1);
    });

    it("listens to 'error', which unheard would throw in the main process", () => {
        const { child, output } = adapt();
        expect(() => child.emit("error", "FatalError", "v8::ToLocalChecked", "{}")).not.toThrow();
        expect(output.join("")).toMatch(/engine process 4242: FatalError at v8::ToLocalChecked/);
    });

    it("copes with a child without pipes", async () => {
        const child = new EventEmitter();
        const engine = new UtilityEngineProcess(
            Object.assign(child, { pid: 1, stdout: null, stderr: null, postMessage: () => undefined, kill: () => true }),
            { onOutput: () => undefined }
        );
        const exits: unknown[] = [];
        engine.on("exit", (code) => exits.push(code));
        child.emit("exit", 0);
        await tick();
        expect(exits).toEqual([0]);
        expect(engine.recentOutput()).toBe("");
    });
});

describe("UtilityEngineProcess.spawner", () => {
    it("forks the entry as the 'Kvault engine' service, with piped output and the configuration in the environment", () => {
        const forks: [string, string[], UtilityForkOptions][] = [];
        const spawner = UtilityEngineProcess.spawner(
            (modulePath, args, options) => {
                forks.push([modulePath, args, options]);
                return new FakeUtilityChild();
            },
            { entry: "/app/out/main/engineProcess.js", env: { PATH: "/usr/bin", UNSET: undefined }, onOutput: () => undefined }
        );

        const child = spawner.spawnEngineProcess({ modelPath: "/models/tiny.gguf", numPages: 80 });
        expect(child).toBeInstanceOf(UtilityEngineProcess);
        expect(forks).toEqual([
            [
                "/app/out/main/engineProcess.js",
                [],
                {
                    serviceName: ENGINE_SERVICE_NAME,
                    stdio: "pipe",
                    env: { PATH: "/usr/bin", [ENGINE_CONFIG_ENV]: JSON.stringify({ modelPath: "/models/tiny.gguf", numPages: 80 }) }
                }
            ]
        ]);
        expect(ENGINE_SERVICE_NAME).toBe("Kvault engine");
    });
});

describe("EngineSupervisor over UtilityEngineProcess", () => {
    /** Children that answer like an engine process: ready on start, a snapshot on request, exit on shutdown. */
    function engineLikeFork(
        children: FakeUtilityChild[]
    ): (modulePath: string, args: string[], options: UtilityForkOptions) => UtilityChild {
        return () => {
            const child = new FakeUtilityChild();
            child.pid = 5000 + children.length;
            const post = child.postMessage.bind(child);
            child.postMessage = (message: unknown): void => {
                post(message);
                const command = message as EngineCommand;
                if (command.type === "call" && command.method === "snapshot") {
                    setTimeout(() => child.emit("message", { type: "answer", callId: command.callId, result: { pid: child.pid } }), 1);
                } else if (command.type === "shutdown") {
                    setTimeout(() => child.exit(0), 1);
                }
            };
            children.push(child);
            setTimeout(() => child.emit("message", { type: "ready", info: { modelName: "tiny" } }), 1);
            return child;
        };
    }

    it("starts, answers, survives a crash with a restart, and shuts down", async () => {
        const children: FakeUtilityChild[] = [];
        const spawner = UtilityEngineProcess.spawner(engineLikeFork(children), {
            entry: "/app/out/main/engineProcess.js",
            onOutput: () => undefined,
            drainMs: 10
        });
        const supervisor = await EngineSupervisor.start(
            { modelPath: "/models/tiny.gguf" },
            { spawner, log: () => undefined, restartBackoffMs: 1 }
        );
        expect(supervisor.info).toEqual({ modelName: "tiny" });
        expect(await supervisor.call("snapshot", {})).toEqual({ pid: 5000 });

        const restarted = new Promise((resolve) => supervisor.on("restarted", resolve));
        const turn = supervisor.chat({
            requestId: "r1",
            workspace: "alice",
            messages: [{ role: "user", content: "Hi" }],
            sampling: { temperature: 0, maxTokens: 4 }
        });
        await tick(2);
        expect(children[0]!.posted).toContainEqual(expect.objectContaining({ type: "chat" }));
        children[0]!.exit(139);
        await expect(turn).rejects.toMatchObject({ code: "engine_crashed" });
        await restarted;
        expect(children).toHaveLength(2);
        expect(await supervisor.call("snapshot", {})).toEqual({ pid: 5001 });

        await supervisor.dispose();
        expect(children[1]!.posted).toContainEqual({ type: "shutdown" });
        expect(supervisor.state).toBe("disposed");
    });
});
