// The supervisor's unit tests' stand-ins: an engine process driven by hand and its spawner, and
// supervisors started over them that each test's afterEach disposes.
import type { EngineCommand, EngineEvent, EngineInfo } from "../../../../contract/engineProtocol.js";
import type { EngineChildProcess, EngineProcessSpawner } from "../../../../host/supervisor/EngineProcessSpawner.js";
import { EngineSupervisor, type EngineSupervisorOptions } from "../../../../host/supervisor/EngineSupervisor.js";

export const info = { modelName: "fake" } as EngineInfo;
export const turn = {
    requestId: "r1",
    workspace: "alice",
    messages: [{ role: "user", content: "Hi" }],
    sampling: { temperature: 0, maxTokens: 4 }
} as const;

/** An engine process the test drives by hand: it records commands and emits what the test says. */
export class FakeEngineProcess implements EngineChildProcess {
    readonly sent: EngineCommand[] = [];
    readonly killSignals: string[] = [];
    #onMessage: (message: unknown) => void = () => undefined;
    #onExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;
    exited = false;

    constructor(
        readonly pid: number,
        private readonly behaviour: { readyOnSpawn: boolean; exitOnShutdown: boolean }
    ) {
        if (behaviour.readyOnSpawn) {
            queueMicrotask(() => this.emit({ type: "ready", info: { ...info, modelName: `fake ${pid}` } }));
        }
    }

    send(command: EngineCommand): void {
        this.sent.push(command);
        if (command.type === "shutdown" && this.behaviour.exitOnShutdown) {
            setTimeout(() => this.exit(0, null), 1);
        }
    }

    on(event: "message" | "exit", listener: never): void {
        if (event === "message") {
            this.#onMessage = listener;
        } else {
            this.#onExit = listener;
        }
    }

    kill(signal: NodeJS.Signals = "SIGTERM"): void {
        this.killSignals.push(signal);
        setTimeout(() => this.exit(null, signal), 1);
    }

    recentOutput(): string {
        return "Error: something native went wrong";
    }

    emit(event: EngineEvent | Record<string, unknown>): void {
        this.#onMessage(event);
    }

    exit(code: number | null, signal: NodeJS.Signals | null): void {
        if (this.exited) {
            return;
        }
        this.exited = true;
        this.#onExit(code, signal);
    }

    lastSent<T extends EngineCommand["type"]>(type: T): Extract<EngineCommand, { type: T }> {
        const command = this.sent.findLast((item) => item.type === type);
        if (command === undefined) {
            throw new Error(`no ${type} command sent; sent: ${this.sent.map((item) => item.type).join(", ")}`);
        }
        return command as Extract<EngineCommand, { type: T }>;
    }

    /** The last `call` of `method` sent. */
    lastCall(method: string): Extract<EngineCommand, { type: "call" }> {
        const command = this.sent.findLast((item) => item.type === "call" && item.method === method);
        if (command === undefined) {
            throw new Error(`no ${method} call sent; sent: ${this.sent.map((item) => item.type).join(", ")}`);
        }
        return command as Extract<EngineCommand, { type: "call" }>;
    }

    /** Answers the last `call` of `method`. */
    answer(method: string, answer: { result?: unknown; error?: { code: string; message: string } }): void {
        this.emit({ type: "answer", callId: this.lastCall(method).callId, ...answer });
    }
}

export class FakeSpawner implements EngineProcessSpawner {
    readonly processes: FakeEngineProcess[] = [];
    readyOnSpawn = true;
    exitOnShutdown = true;

    readonly modelPaths: string[] = [];
    /** The configuration each process was started with. */
    readonly configs: Record<string, unknown>[] = [];

    spawnEngineProcess(config: { modelPath: string }): EngineChildProcess {
        this.modelPaths.push(config.modelPath);
        this.configs.push({ ...config });
        const child = new FakeEngineProcess(1000 + this.processes.length, {
            readyOnSpawn: this.readyOnSpawn,
            exitOnShutdown: this.exitOnShutdown
        });
        this.processes.push(child);
        return child;
    }

    get last(): FakeEngineProcess {
        return this.processes.at(-1)!;
    }
}

export const supervisors: EngineSupervisor[] = [];

export async function start(spawner: FakeSpawner, options: EngineSupervisorOptions = {}): Promise<EngineSupervisor> {
    const supervisor = await EngineSupervisor.start(
        { modelPath: "/fake.gguf" },
        { spawner, log: () => undefined, restartBackoffMs: 1, ...options }
    );
    supervisors.push(supervisor);
    return supervisor;
}

export function nextEvent<K extends "crashed" | "restarted" | "down">(supervisor: EngineSupervisor, event: K): Promise<unknown> {
    return new Promise((resolve) => {
        const off = supervisor.on(event, (payload) => {
            off();
            resolve(payload);
        });
    });
}

/** Disposes every supervisor `start` made; call from afterEach. */
export async function disposeSupervisors(): Promise<void> {
    await Promise.all(supervisors.splice(0).map((supervisor) => supervisor.dispose()));
}
