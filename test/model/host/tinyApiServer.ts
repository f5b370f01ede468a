import OpenAI from "openai";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

/** The OpenAI-compatible API on the tiny model in this process: the engine, the server, its URL and the official client. */
export interface TinyApiServer extends InProcessApiServer {
    readonly client: OpenAI;
}

/**
 * Starts the tiny model's engine and a KvaultHttpServer over it on a free loopback port, with `apiKey`.
 * `tokenDelayMs` paces the answers (the streaming demo mode), for tests that act in the middle of one:
 * the tiny model alone writes 200 tokens in about a tenth of a second, before a client's abort arrives.
 */
export async function startTinyApiServer(apiKey: string, { tokenDelayMs = 0 }: { tokenDelayMs?: number } = {}): Promise<TinyApiServer> {
    const api = await startInProcessApiServer({
        apiKey,
        engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false, tokenDelayMs },
        server: { requestTimeoutMs: 60_000 }
    });
    return { ...api, client: new OpenAI({ baseURL: `${api.url}/v1`, apiKey, maxRetries: 0 }) };
}
