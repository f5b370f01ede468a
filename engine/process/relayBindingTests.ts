// The engine process's half of the binding-test relay (contract/bindingTestRelay.ts). Before it
// loads a prebuilt llama.cpp binary, node-llama-cpp forks its own testBindingBinary.js to load it
// in a throwaway process (getShouldTestBinaryBeforeLoading: always on Linux, GPU builds on
// Windows), and picks the next backend if that process fails. In Electron it tries
// `utilityProcess.fork` from `import("electron")` first, which a utilityProcess does not have,
// then `child_process.fork`, which needs the RunAsNode fuse Kvault ships turned off. This module
// makes that one fork go through main instead: the test still runs, in a utilityProcess of its own.
import cp, { type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import path from "node:path";
import {
    BINDING_TEST_RELAY_ENV,
    RelayLineReader,
    encodeRelayLine,
    parseRelayAddress,
    type BindingTestRelayAddress
} from "../../contract/bindingTestRelay.js";

export type RelayInstallResult =
    | { readonly kind: "installed"; readonly address: BindingTestRelayAddress }
    /** The host set no relay (headless mode, tests): child_process.fork works there. */
    | { readonly kind: "absent" }
    | { readonly kind: "invalid"; readonly problem: string };

/** node-llama-cpp's test file: dist/bindings/utils/testBindingBinary.js, which sets TEST_BINDING_CP for its child. */
const TEST_MODULE_NAME = "testBindingBinary.js";
const installed = Symbol.for("kvault.bindingTestRelay");

/**
 * When the host put a relay address in `env`, routes node-llama-cpp's binding-test fork to it;
 * every other fork still goes to child_process.fork as before. Call before the first getLlama.
 * Replacing a child_process export is what Electron itself does to make fork run as Node
 * (lib/node/init.ts); syncBuiltinESMExports carries it to `import { fork }` bindings.
 */
export function relayBindingTestsToHost(
    env: Readonly<Record<string, string | undefined>>,
    log: (line: string) => void = (line) => process.stderr.write(`[kvault engine ${process.pid}] ${line}\n`)
): RelayInstallResult {
    const address = parseRelayAddress(env[BINDING_TEST_RELAY_ENV]);
    if (address === undefined) {
        return { kind: "absent" };
    }
    if (typeof address === "string") {
        return { kind: "invalid", problem: address };
    }
    const exports = cp as unknown as { fork: typeof cp.fork; [installed]?: true };
    if (exports[installed] === true) {
        return { kind: "installed", address };
    }
    const original = exports.fork;
    exports.fork = function fork(this: unknown, modulePath: unknown, ...rest: unknown[]): ChildProcess {
        if (isBindingTest(modulePath, rest)) {
            return new RelayedBindingTest(address, modulePath, log) as unknown as ChildProcess;
        }
        return (original as (...args: unknown[]) => ChildProcess).call(this, modulePath, ...rest);
    } as typeof cp.fork;
    exports[installed] = true;
    syncBuiltinESMExports();
    return { kind: "installed", address };
}

/** fork(modulePath, args?, options?) or fork(modulePath, options?), as node-llama-cpp calls it for its test. */
function isBindingTest(modulePath: unknown, rest: readonly unknown[]): modulePath is string {
    const options = (Array.isArray(rest[0]) ? rest[1] : rest[0]) as { env?: Record<string, unknown> } | undefined;
    return typeof modulePath === "string" && path.basename(modulePath) === TEST_MODULE_NAME && options?.env?.TEST_BINDING_CP === "true";
}

/**
 * A binding test running in main, as the ChildProcess node-llama-cpp's testBindingBinary uses:
 * 'message' and 'exit' events, send(), kill(), exitCode, and no stdio (it asks for none). A test
 * that cannot be relayed (main unreachable, a refusal) exits with code 1, which node-llama-cpp
 * reads as a failed test, so it tries its next backend. Exported for the relay's tests.
 */
export class RelayedBindingTest extends EventEmitter {
    pid: number | undefined = undefined;
    exitCode: number | null = null;
    signalCode: NodeJS.Signals | null = null;
    killed = false;
    readonly stdin = null;
    readonly stdout = null;
    readonly stderr = null;
    readonly #socket: net.Socket;
    #ended = false;

    constructor(
        address: BindingTestRelayAddress,
        modulePath: string,
        private readonly log: (line: string) => void
    ) {
        super();
        this.#socket = net.connect(address.path);
        this.#socket.setEncoding("utf8");
        const reader = new RelayLineReader(
            (value) => this.#onLine(value),
            (problem) => {
                this.log(`the binding-test relay sent ${problem}; counting the test as failed.`);
                this.#socket.destroy();
                this.#finish(1, null);
            }
        );
        this.#socket.on("data", (chunk: string) => reader.push(chunk));
        this.#socket.on("error", (error) => {
            this.log(`could not reach Kvault's main process to test a llama.cpp binary (${error.message}); counting the test as failed.`);
        });
        this.#socket.on("close", () => this.#finish(1, null));
        this.#socket.write(encodeRelayLine({ token: address.token, modulePath }));
    }

    get connected(): boolean {
        return !this.#ended;
    }

    send(message: unknown): boolean {
        if (this.#ended) {
            return false;
        }
        this.#socket.write(encodeRelayLine({ message }));
        return true;
    }

    /** Closing the connection is the kill: main kills the test process when it goes. */
    kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
        if (this.#ended) {
            return false;
        }
        this.killed = true;
        this.#socket.destroy();
        this.#finish(null, signal);
        return true;
    }

    #onLine(value: unknown): void {
        const line = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
        if ("message" in line) {
            this.emit("message", line.message);
        } else if ("spawned" in line) {
            const pid = (line.spawned as { pid?: unknown } | null)?.pid;
            this.pid = typeof pid === "number" ? pid : undefined;
        } else if ("exit" in line) {
            this.#finish(typeof line.exit === "number" ? line.exit : 1, null);
            this.#socket.end();
        } else if ("refused" in line) {
            this.log(`Kvault's main process would not run the binding test: ${String(line.refused)}`);
            this.#finish(1, null);
            this.#socket.end();
        }
    }

    /** Once: the end as node reports a child's, on a later turn of the event loop. */
    #finish(code: number | null, signal: NodeJS.Signals | null): void {
        if (this.#ended) {
            return;
        }
        this.#ended = true;
        this.exitCode = code;
        this.signalCode = signal;
        setImmediate(() => {
            this.emit("exit", code, signal);
            this.emit("close", code, signal);
        });
    }
}
