// The headless server's RPC as serve.ts assembles it (KvaultHttpServer, RpcServer, the shared
// RpcDispatcher and host methods, a real WorkspaceStore), on a real engine in the test's own
// process, and a raw WebSocket client that sends frames as they are.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import type { RpcServerMessage } from "../../../contract/rpc.js";
import { localEngine } from "../../../engine/process/localEngine.js";
import type { EngineService } from "../../../engine/service/EngineService.js";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { inspectModelFile } from "../../../host/models/inspectModelFile.js";
import { hostMethods } from "../../../host/rpc/hostMethods.js";
import { RpcDispatcher } from "../../../host/rpc/RpcDispatcher.js";
import { RpcServer } from "../../../host/rpc/RpcServer.js";
import { WorkspaceStore } from "../../../host/store/WorkspaceStore.js";
import { modelMethods, type ModelHost } from "../../../host/supervisor/modelMethods.js";
import { listenApiServer } from "../../support/inProcessApiServer.js";

export const API_KEY = "rpc-test-key-0001";

export interface RpcHost {
    readonly url: string;
    readonly dataDir: string;
    readonly logged: string[];
    close(): Promise<void>;
}

/**
 * One server over `service`. Its model manager inspects with the host's own reader and keeps its
 * library and downloads in a fresh data directory; it cannot switch models (an in-process engine
 * keeps its model: switching is the supervisor's, tested in test/model/process/switchModel.test.ts).
 */
export async function startRpcHost(service: EngineService, options: { readonly withStore?: boolean } = {}): Promise<RpcHost> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-rpc-"));
    const engine = localEngine(service);
    const { decodeContextSize, numDecodeSequences } = service.engine.config;
    const modelHost: ModelHost = {
        get info() {
            return engine.info;
        },
        inspectModel: (modelPath) => inspectModelFile(modelPath, { contextSize: decodeContextSize, sequences: numDecodeSequences }),
        switchModel: () => Promise.reject(new Error("This test's host keeps its in-process engine's model."))
    };
    const models = modelMethods(modelHost, (model) => path.resolve(model), path.join(dataDir, "models"), {
        libraryFile: path.join(dataDir, "models.json")
    });
    const store = options.withStore === true ? WorkspaceStore.open(dataDir) : undefined;
    const logged: string[] = [];
    const rpc = new RpcServer(
        new RpcDispatcher(
            async () => engine,
            hostMethods({ engine: async () => engine, models: async () => models, ...(store === undefined ? {} : { store: () => store }) })
        ),
        { log: (line) => logged.push(line) }
    );
    const { server, url } = await listenApiServer(service, {
        apiKey: API_KEY,
        server: {
            onRpcUpgrade: (request, socket, head) => rpc.handleUpgrade(request, socket, head),
            requestTimeoutMs: httpDefaults.requestTimeoutMs
        }
    });
    return {
        url,
        dataDir,
        logged,
        close: async () => {
            await rpc.close();
            await server.close();
            await models.stopDownloads();
            await (await store)?.close();
            fs.rmSync(dataDir, { recursive: true, force: true });
        }
    };
}

/** A WebSocket RPC client for tests: sends raw frames, collects every message, and how the socket closed. */
export class RawClient {
    readonly messages: RpcServerMessage[] = [];
    closed: { readonly code: number; readonly reason: string } | undefined;
    readonly errors: Error[] = [];

    private constructor(readonly socket: WebSocket) {
        socket.on("message", (data) => this.messages.push(JSON.parse(String(data)) as RpcServerMessage));
        socket.on("close", (code, reason) => {
            this.closed = { code, reason: String(reason) };
        });
        socket.on("error", (error) => this.errors.push(error));
    }

    static async connect(url: string, options: { key?: string; origin?: string } = {}): Promise<RawClient> {
        const socket = new WebSocket(`${url.replace("http", "ws")}/rpc?key=${options.key ?? API_KEY}`, { origin: options.origin ?? url });
        await new Promise<void>((resolve, reject) => {
            socket.once("open", () => resolve());
            socket.once("error", reject);
        });
        return new RawClient(socket);
    }

    async reply(id: number, timeoutMs = 30_000): Promise<RpcServerMessage> {
        for (let waited = 0; waited < timeoutMs; waited += 10) {
            const found = this.messages.find((message) => "id" in message && message.id === id);
            if (found) {
                return found;
            }
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        throw new Error(`no reply to ${id}`);
    }

    async call(id: number, method: string, params: unknown, timeoutMs?: number): Promise<RpcServerMessage> {
        this.socket.send(JSON.stringify({ id, method, params }));
        return this.reply(id, timeoutMs);
    }

    async untilClosed(timeoutMs = 30_000): Promise<{ readonly code: number; readonly reason: string }> {
        for (let waited = 0; waited < timeoutMs && this.closed === undefined; waited += 10) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        if (this.closed === undefined) {
            throw new Error(`the socket was not closed within ${timeoutMs} ms`);
        }
        return this.closed;
    }
}
