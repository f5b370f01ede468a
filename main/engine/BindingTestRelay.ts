// Pure on purpose (no electron at runtime): main's half of the binding-test relay
// (contract/bindingTestRelay.ts). Engine processes cannot fork node-llama-cpp's binary test with
// the RunAsNode fuse off; main can, as a utilityProcess. utilityProcessSpawner.ts hands this the
// real utilityProcess.fork; its tests hand it child_process.fork.
import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
    BINDING_TEST_RELAY_ENV,
    RelayLineReader,
    encodeRelayLine,
    type BindingTestRelayAddress,
    type RelayFromTest
} from "../../contract/bindingTestRelay.js";
import type { UtilityChild, UtilityFork } from "./UtilityEngineProcess.js";

/** One binding test, as main saw it: which backend node-llama-cpp tried, and how it ended. */
export interface BindingTestRecord {
    /** From node-llama-cpp's "start" message: "cuda", "vulkan", "metal", "cpu", or "unknown" before it came. */
    readonly backend: string;
    readonly binaryPath: string | undefined;
    readonly outcome: "running" | "passed" | "failed";
    readonly exitCode: number | null;
    /** The end of the test process's stderr: node-llama-cpp's test prints the loader's error there. */
    readonly output: string;
}

/** The relay's record of tests, as startEngine reads it. */
export interface BindingTestLog {
    /** Tests relayed since the relay started. */
    readonly numTests: number;
    /** The latest of them (at most bindingTestRelayDefaults.maxRecords), oldest first. */
    readonly tests: readonly BindingTestRecord[];
}

export interface BindingTestRelayOptions {
    /** The one module the relay forks: node-llama-cpp's testBindingBinary.js, as resolved in main. */
    readonly testModule: string;
    readonly fork: UtilityFork;
    /** The test processes' environment (TEST_BINDING_CP is added); main's own by default, never the engine's. */
    readonly env?: Readonly<Record<string, string | undefined>>;
    readonly log: (line: string) => void;
}

export const bindingTestRelayDefaults = {
    /** node-llama-cpp tests one binary at a time; more at once is not a binary test. */
    maxConcurrentTests: 4,
    /** A connection must say hello within this (ms). */
    helloTimeoutMs: 10_000,
    /** Tests kept for the start error and diagnostics, newest last. */
    maxRecords: 32,
    outputChars: 2_000
} as const;

export const BINDING_TEST_SERVICE_NAME = "Kvault binary test";

/**
 * node-llama-cpp's test file, resolved as the engine resolves it (the same node_modules, inside
 * app.asar once packaged): its package exports only ".", so the file is found beside dist/index.js.
 * It forks itself (testBindingBinary.js `fork(__filename, …)`) and runs as the test when
 * TEST_BINDING_CP is "true". Undefined when this node-llama-cpp has no such file.
 */
export function nodeLlamaCppBindingTestModule(): string | undefined {
    const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
    const testModule = path.join(path.dirname(entry), "bindings", "utils", "testBindingBinary.js");
    return fs.existsSync(testModule) ? testModule : undefined;
}

interface MutableRecord {
    backend: string;
    binaryPath: string | undefined;
    outcome: "running" | "passed" | "failed";
    exitCode: number | null;
    output: string;
    passed: boolean;
}

/**
 * A private local socket (a Unix socket in a 0700 folder, or a Windows named pipe) with a random
 * token. Each connection forks `testModule` once, relays the test's messages both ways, reports its
 * exit and closes; a connection that goes away kills its test. Anything else is refused in one line.
 */
export class BindingTestRelay implements BindingTestLog {
    readonly #server: net.Server;
    readonly #records: MutableRecord[] = [];
    readonly #children = new Set<UtilityChild>();
    readonly #sockets = new Set<net.Socket>();
    readonly #folder: string | undefined;
    #closing: Promise<void> | undefined;
    #numTests = 0;

    private constructor(
        readonly address: BindingTestRelayAddress,
        folder: string | undefined,
        private readonly options: BindingTestRelayOptions
    ) {
        this.#folder = folder;
        this.#server = net.createServer((socket) => this.#serve(socket));
    }

    static async listen(options: BindingTestRelayOptions): Promise<BindingTestRelay> {
        const token = crypto.randomBytes(24).toString("hex");
        const folder = process.platform === "win32" ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), "kvault-relay-"));
        const socketPath =
            folder === undefined
                ? `\\\\.\\pipe\\kvault-binding-test-${crypto.randomBytes(12).toString("hex")}`
                : path.join(folder, "relay.sock");
        const relay = new BindingTestRelay({ path: socketPath, token }, folder, options);
        await new Promise<void>((resolve, reject) => {
            relay.#server.once("error", reject);
            relay.#server.listen(socketPath, () => {
                relay.#server.off("error", reject);
                resolve();
            });
        }).catch((error: unknown) => {
            relay.#removeFolder();
            throw error;
        });
        relay.#server.on("error", (error) => options.log(`The binding-test relay failed: ${error.message}`));
        return relay;
    }

    /** What an engine process's environment needs to reach this relay. */
    engineEnv(): Record<string, string> {
        return { [BINDING_TEST_RELAY_ENV]: JSON.stringify(this.address) };
    }

    get numTests(): number {
        return this.#numTests;
    }

    get tests(): readonly BindingTestRecord[] {
        return this.#records.map(({ passed: _passed, ...record }) => ({ ...record }));
    }

    /** Kills running tests, stops listening and removes the socket's folder; idempotent. */
    close(): Promise<void> {
        this.#closing ??= (async () => {
            for (const child of this.#children) {
                child.kill();
            }
            this.#children.clear();
            for (const socket of this.#sockets) {
                socket.destroy();
            }
            await new Promise<void>((resolve) => this.#server.close(() => resolve()));
            this.#removeFolder();
        })();
        return this.#closing;
    }

    #serve(socket: net.Socket): void {
        if (this.#closing !== undefined) {
            socket.destroy();
            return;
        }
        this.#sockets.add(socket);
        socket.setEncoding("utf8");
        let child: UtilityChild | undefined;
        let record: MutableRecord | undefined;
        const reply = (line: RelayFromTest): void => {
            if (!socket.destroyed) {
                socket.write(encodeRelayLine(line));
            }
        };
        const refuse = (why: string): void => {
            reply({ refused: why });
            socket.end();
        };
        const helloTimer = setTimeout(
            () => refuse(`no hello within ${bindingTestRelayDefaults.helloTimeoutMs / 1000} s`),
            bindingTestRelayDefaults.helloTimeoutMs
        );
        const reader = new RelayLineReader(
            (value) => {
                if (child === undefined && record === undefined) {
                    clearTimeout(helloTimer);
                    const hello = this.#checkHello(value);
                    if (typeof hello === "string") {
                        refuse(hello);
                        return;
                    }
                    ({ child, record } = this.#start(reply, () => socket.end()));
                    return;
                }
                const message = (value as { message?: unknown } | null)?.message;
                if (child !== undefined && record !== undefined && message !== undefined) {
                    noteToTest(record, message);
                    try {
                        child.postMessage(message);
                    } catch {
                        // the test process is gone; its exit line follows
                    }
                }
            },
            (problem) => refuse(`sent ${problem}`)
        );
        socket.on("data", (chunk: string) => reader.push(chunk));
        socket.on("error", () => undefined); // an engine that died mid-test: 'close' follows
        socket.on("close", () => {
            this.#sockets.delete(socket);
            clearTimeout(helloTimer);
            if (child !== undefined && this.#children.has(child)) {
                child.kill(); // the engine gave up on the test (its timeout, or it exited)
            }
        });
    }

    #checkHello(value: unknown): string | undefined {
        const hello = (typeof value === "object" && value !== null ? value : {}) as { token?: unknown; modulePath?: unknown };
        const token = Buffer.from(typeof hello.token === "string" ? hello.token : "");
        const expected = Buffer.from(this.address.token);
        if (token.length !== expected.length || !crypto.timingSafeEqual(token, expected)) {
            return "wrong token";
        }
        if (typeof hello.modulePath !== "string" || !sameFile(hello.modulePath, this.options.testModule)) {
            return `only node-llama-cpp's binding test (${this.options.testModule}) is relayed`;
        }
        if (this.#children.size >= bindingTestRelayDefaults.maxConcurrentTests) {
            return `${this.#children.size} tests are running already (at most ${bindingTestRelayDefaults.maxConcurrentTests})`;
        }
        return undefined;
    }

    #start(reply: (line: RelayFromTest) => void, end: () => void): { child: UtilityChild; record: MutableRecord } {
        const record: MutableRecord = {
            backend: "unknown",
            binaryPath: undefined,
            outcome: "running",
            exitCode: null,
            output: "",
            passed: false
        };
        this.#records.push(record);
        this.#numTests++;
        this.#records.splice(0, Math.max(0, this.#records.length - bindingTestRelayDefaults.maxRecords));
        const env: Record<string, string> = {};
        for (const [key, value] of Object.entries(this.options.env ?? process.env)) {
            if (value !== undefined) {
                env[key] = value;
            }
        }
        env.TEST_BINDING_CP = "true"; // what makes testBindingBinary.js run as the test process
        const child = this.options.fork(this.options.testModule, [], { serviceName: BINDING_TEST_SERVICE_NAME, stdio: "pipe", env });
        this.#children.add(child);
        child.stdout?.resume(); // read and dropped: a full pipe would stall the test
        child.stderr?.setEncoding("utf8");
        child.stderr?.on("data", (chunk: string) => {
            record.output = (record.output + chunk).slice(-bindingTestRelayDefaults.outputChars);
        });
        child.on("message", (message: unknown) => {
            noteFromTest(record, message);
            reply({ message });
        });
        child.on("error", (type: string, location: string) => {
            record.output = `${record.output}\n${type} at ${location}`.slice(-bindingTestRelayDefaults.outputChars);
        });
        child.on("exit", (code: number) => {
            this.#children.delete(child);
            record.exitCode = code;
            record.outcome = code === 0 && record.passed ? "passed" : "failed";
            if (record.outcome === "failed") {
                this.options.log(`The ${record.backend} llama.cpp binary failed its test (exit code ${code}).`);
            }
            reply({ exit: code });
            end();
        });
        reply({ spawned: { pid: child.pid ?? null } });
        return { child, record };
    }

    #removeFolder(): void {
        if (this.#folder !== undefined) {
            fs.rmSync(this.#folder, { recursive: true, force: true });
        }
    }
}

/** node-llama-cpp's "start" names the binary and backend (gpu: false is the CPU). */
function noteToTest(record: MutableRecord, message: unknown): void {
    const start = message as { type?: unknown; gpu?: unknown; bindingBinaryPath?: unknown } | null;
    if (start?.type === "start") {
        record.backend = start.gpu === false ? "cpu" : typeof start.gpu === "string" ? start.gpu : "unknown";
        record.binaryPath = typeof start.bindingBinaryPath === "string" ? start.bindingBinaryPath : undefined;
    }
}

/** Its "done" is the test's pass; an exit without it is a failure. */
function noteFromTest(record: MutableRecord, message: unknown): void {
    if ((message as { type?: unknown } | null)?.type === "done") {
        record.passed = true;
    }
}

function sameFile(a: string, b: string): boolean {
    if (path.resolve(a) === path.resolve(b)) {
        return true;
    }
    try {
        return fs.realpathSync(a) === fs.realpathSync(b);
    } catch {
        return false;
    }
}
