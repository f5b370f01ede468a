// Electron's utilityProcess.fork, played by child_process.fork, for tests of main's modules that
// fork (the engine spawner, the binding-test relay) where no Electron binary exists. The child
// is a real Node process; what differs from a utilityProcess is only the transport underneath
// (process.send instead of process.parentPort), which node-llama-cpp's test file and the engine's
// transport both handle.
import { fork } from "node:child_process";
import type { UtilityChild, UtilityFork } from "../../main/engine/UtilityEngineProcess.js";

export interface ForkAsUtilityOptions {
    /** Node flags for every child, e.g. `--import` of a loader. */
    readonly execArgv?: readonly string[];
    /** Called with each child as it is forked. */
    readonly onFork?: (modulePath: string, child: UtilityChild) => void;
}

export function forkAsUtilityProcess(options: ForkAsUtilityOptions = {}): UtilityFork {
    return (modulePath, args, forkOptions) => {
        const child = fork(modulePath, args, {
            env: forkOptions.env,
            execArgv: [...(options.execArgv ?? [])],
            stdio: ["ignore", "pipe", "pipe", "ipc"],
            serialization: "json"
        });
        const utility: UtilityChild = {
            get pid() {
                return child.pid;
            },
            stdout: child.stdout,
            stderr: child.stderr,
            postMessage(message: unknown) {
                // utilityProcess.postMessage throws once the process is gone; send would emit 'error' instead.
                if (!child.connected) {
                    throw new Error("the process has exited");
                }
                child.send(message as object, undefined, {}, () => undefined);
            },
            kill: () => child.kill(),
            on(event: "message" | "exit" | "error", listener: (...args: never[]) => void) {
                if (event === "message") {
                    child.on("message", listener as (message: unknown) => void);
                } else if (event === "exit") {
                    // A utilityProcess's 'exit' has a code only; a signal ends it with a non-zero one.
                    child.on("exit", (code) => (listener as (code: number) => void)(code ?? 1));
                } else {
                    child.on("error", (error) => (listener as (type: string, location: string) => void)(error.message, modulePath));
                }
                return utility;
            }
        } as UtilityChild;
        options.onFork?.(modulePath, utility);
        return utility;
    };
}
