import OpenAI from "openai";
import { localEngine } from "../../../engine/process/localEngine.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { KvaultHttpServer } from "../../../host/http/KvaultHttpServer.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";

/** The OpenAI-compatible API on the tiny model in this process: the engine, the server, its URL and the official client. */
export interface TinyApiServer {
    readonly service: EngineService;
    readonly server: KvaultHttpServer;
    readonly url: string;
    readonly client: OpenAI;
    /** Closes the server, then disposes of the engine. */
    close(): Promise<void>;
}

/**
 * Starts the tiny model's engine and a KvaultHttpServer over it on a free loopback port, with `apiKey`.
 * `tokenDelayMs` paces the answers (the streaming demo mode), for tests that act in the middle of one:
 * the tiny model alone writes 200 tokens in about a tenth of a second, before a client's abort arrives.
 */
export async function startTinyApiServer(apiKey: string, { tokenDelayMs = 0 }: { tokenDelayMs?: number } = {}): Promise<TinyApiServer> {
    const service = await EngineService.start({
        modelPath: generatedModelPath("tiny"),
        ...tinyEngineConfig,
        gpu: false,
        tokenDelayMs
    });
    const server = new KvaultHttpServer({
        engine: localEngine(service),
        apiKey,
        host: "127.0.0.1",
        port: 0,
        modelId: "tiny",
        requestTimeoutMs: 60_000
    });
    const url = (await server.listen()).url;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
    return {
        service,
        server,
        url,
        client,
        close: async () => {
            await server.close();
            await service.dispose();
        }
    };
}
