// llama.cpp's own `llama-server`, built once from node-llama-cpp's bundled source
// (test/bench/peer/llamaServerBinary.ts), started on loopback by a test on a generated model: the
// real remote backend Kvault's backend tests run against.
import { spawn, type ChildProcess } from "node:child_process";
import { ensureLlamaServer } from "../bench/peer/llamaServerBinary.js";

export interface LlamaServer {
    /** e.g. "http://127.0.0.1:41234" (its OpenAI API is under /v1). */
    readonly url: string;
    readonly child: ChildProcess;
    output(): string;
    stop(): Promise<void>;
}

const START_TIMEOUT_MS = 120_000;

/** Starts llama-server on `modelPath` with `args` (say --alias, --parallel, --ctx-size, --metrics) on a free loopback port; resolves once /health is 200. */
export async function startLlamaServer(modelPath: string, args: readonly string[]): Promise<LlamaServer> {
    const binary = ensureLlamaServer();
    const child = spawn(binary, ["--model", modelPath, "--host", "127.0.0.1", "--port", "0", "--no-webui", "--threads", "1", ...args], {
        stdio: ["ignore", "pipe", "pipe"]
    });
    let output = "";
    const onData = (chunk: Buffer): void => void (output += chunk.toString("utf8"));
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const stop = async (): Promise<void> => {
        if (child.exitCode !== null || child.signalCode !== null) {
            return;
        }
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
    };
    const deadline = performance.now() + START_TIMEOUT_MS;
    let url: string | undefined;
    while (performance.now() < deadline) {
        if (child.exitCode !== null) {
            throw new Error(`llama-server exited (${child.exitCode}) before it was ready:\n${output.slice(-4000)}`);
        }
        url ??= /listening on (http:\/\/[^\s]+)/.exec(output)?.[1]?.replace(/\/$/, "");
        if (url !== undefined && (await fetch(`${url}/health`).catch(() => undefined))?.ok === true) {
            return { url, child, output: () => output, stop };
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await stop();
    throw new Error(`llama-server was not ready within ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-4000)}`);
}
