// The two servers the peer benchmark drives through the same OpenAI-style client: Kvault's
// headless `serve` and llama.cpp's `llama-server`, each started fresh on loopback on the same GGUF.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { repositoryRoot } from "../../support/generatedModels.js";

export interface PeerServer {
    readonly name: string;
    /** e.g. "http://127.0.0.1:41234" */
    readonly baseUrl: string;
    readonly apiKey: string | undefined;
    /** The id its GET /v1/models lists first: what requests name as `model`. */
    readonly modelId: string;
    /** The body fields that name a conversation's workspace (Kvault) or its cache slot (llama-server). */
    conversationFields(conversation: string, slot: number): Record<string, unknown>;
    stop(): Promise<void>;
}

export interface PeerConfig {
    readonly modelPath: string;
    /** Tokens per conversation. */
    readonly contextSize: number;
    /** Conversations served at once: Kvault's decode sequences, llama-server's slots. */
    readonly numParallel: number;
    /** CPU threads for llama-server; Kvault's engine uses every core this process may use, the same on the machines the bench runs on. */
    readonly threads: number;
    /** llama-server's --n-gpu-layers (a CUDA build); absent on the CPU. Kvault offloads by itself (gpu "auto"). */
    readonly gpuLayers?: number;
    /** Kvault's data directory, kept when the server stops (a restart resumes from it); absent: a fresh one, removed at stop. */
    readonly dataDir?: string;
    /** More command-line options for this server alone. */
    readonly extraArgs?: readonly string[];
}

const START_TIMEOUT_MS = 180_000;

export async function startKvault(config: PeerConfig): Promise<PeerServer> {
    const apiKey = "kv-peer-bench";
    const dataDir = config.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "kvault-peer-"));
    const child = spawn(
        process.execPath,
        [
            "--import",
            "tsx",
            path.join(repositoryRoot, "host", "headless", "serve.ts"),
            "--port",
            "0",
            "--model",
            config.modelPath,
            "--context",
            String(config.contextSize),
            "--decode-sequences",
            String(config.numParallel),
            "--threads",
            String(config.threads),
            "--flash-attention",
            "on",
            "--api-key",
            apiKey,
            "--data-dir",
            dataDir,
            ...(config.extraArgs ?? [])
        ],
        { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] }
    );
    const baseUrl = await waitForLine(child, "Kvault", /Kvault listening on (http:\/\/[^\s]+)/);
    return {
        name: "Kvault",
        baseUrl,
        apiKey,
        modelId: await firstModelId(baseUrl, apiKey),
        conversationFields: (conversation) => ({ user: conversation }),
        stop: async () => {
            await stopChild(child);
            if (config.dataDir === undefined) {
                fs.rmSync(dataDir, { recursive: true, force: true });
            }
        }
    };
}

export async function startLlamaServer(binary: string, config: PeerConfig): Promise<PeerServer> {
    const child = spawn(
        binary,
        [
            "--model",
            config.modelPath,
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--threads",
            String(config.threads),
            "--threads-batch",
            String(config.threads),
            "--flash-attn",
            "on",
            "--parallel",
            String(config.numParallel),
            // llama-server divides its context among its slots.
            "--ctx-size",
            String(config.contextSize * config.numParallel),
            "--no-webui",
            ...(config.extraArgs ?? []),
            ...(config.gpuLayers === undefined ? [] : ["--n-gpu-layers", String(config.gpuLayers)])
        ],
        { stdio: ["ignore", "pipe", "pipe"] }
    );
    const baseUrl = await waitForLine(child, "llama-server", /listening on (http:\/\/[^\s]+)/);
    await waitForHealth(baseUrl);
    return {
        name: "llama-server",
        baseUrl: baseUrl.replace(/\/$/, ""),
        apiKey: undefined,
        modelId: await firstModelId(baseUrl.replace(/\/$/, ""), undefined),
        conversationFields: (_conversation, slot) => ({ id_slot: slot, cache_prompt: true }),
        stop: () => stopChild(child)
    };
}

/** Resolves with the first capture of `pattern` in the child's output; rejects if it exits or takes too long. */
function waitForLine(child: ChildProcess, name: string, pattern: RegExp): Promise<string> {
    return new Promise((resolve, reject) => {
        let output = "";
        const timer = setTimeout(
            () => fail(new Error(`${name} did not start within ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-4000)}`)),
            START_TIMEOUT_MS
        );
        const onData = (chunk: Buffer): void => {
            output += chunk.toString("utf8");
            const match = pattern.exec(output);
            if (match?.[1] !== undefined) {
                clearTimeout(timer);
                child.off("exit", onExit);
                resolve(match[1]);
            }
        };
        const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
            fail(new Error(`${name} exited (${signal ?? `code ${code}`}) before it was ready:\n${output.slice(-4000)}`));
        const fail = (error: Error): void => {
            clearTimeout(timer);
            child.kill("SIGKILL");
            reject(error);
        };
        child.stdout?.on("data", onData);
        child.stderr?.on("data", onData);
        child.once("exit", onExit);
    });
}

async function firstModelId(baseUrl: string, apiKey: string | undefined): Promise<string> {
    const response = await fetch(`${baseUrl}/v1/models`, { headers: apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` } });
    const id = ((await response.json()) as { data?: { id?: unknown }[] }).data?.[0]?.id;
    if (!response.ok || typeof id !== "string") {
        throw new Error(`${baseUrl}/v1/models answered ${response.status} without a model id.`);
    }
    return id;
}

async function waitForHealth(baseUrl: string): Promise<void> {
    const deadline = performance.now() + START_TIMEOUT_MS;
    while (performance.now() < deadline) {
        const response = await fetch(`${baseUrl.replace(/\/$/, "")}/health`).catch(() => undefined);
        if (response?.ok) {
            return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`${baseUrl}/health did not answer 200 within ${START_TIMEOUT_MS / 1000} s.`);
}

async function stopChild(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) {
        return;
    }
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
}
