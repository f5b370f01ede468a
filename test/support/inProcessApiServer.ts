// The model tier's API server in one process (anthropicApi, responsesApi, toolCallsApi): an engine
// service on a generated model behind the real HTTP server on a loopback port, for the official
// clients to drive.
import type { EngineConfigInput } from "../../engine/index.js";
import { localEngine } from "../../engine/process/localEngine.js";
import { EngineService } from "../../engine/service/EngineService.js";
import { KvaultHttpServer, type KvaultHttpServerOptions } from "../../host/http/KvaultHttpServer.js";
import { tinyEngineConfig } from "./engineFixtures.js";
import { generatedModelPath } from "./generatedModels.js";

/** The window (and both contexts) of the tool tests' engine, in tokens: a tool section takes room in the prompt. */
export const TOOL_WINDOW_TOKENS = 1024;

/** The tiny model with a window wider than the tiny default, on the CPU: what the tool tests run on. */
export const toolWindowEngineConfig: EngineConfigInput = {
    modelPath: generatedModelPath("tiny"),
    ...tinyEngineConfig,
    window: TOOL_WINDOW_TOKENS,
    prefillContextSize: TOOL_WINDOW_TOKENS,
    decodeContextSize: TOOL_WINDOW_TOKENS,
    numPages: 192,
    gpu: false
};

/** A KvaultHttpServer listening on a loopback port over an engine service. */
export interface ListeningApiServer {
    readonly server: KvaultHttpServer;
    /** `http://127.0.0.1:<port>`, without /v1. */
    readonly url: string;
    readonly port: number;
    /** The one-time login link the server printed, when it serves the renderer with login sessions. */
    readonly loginLink: string | undefined;
}

export interface InProcessApiServer extends ListeningApiServer {
    readonly service: EngineService;
    /** Closes the server, then disposes of the engine. */
    close(): Promise<void>;
}

export interface InProcessApiServerOptions {
    /** The server's own key. */
    readonly apiKey: string;
    /** The engine's configuration; toolWindowEngineConfig when absent. */
    readonly engine?: EngineConfigInput;
    /** Adds to or overrides the server's options (model "tiny", a 120 s request limit). */
    readonly server?: Partial<Omit<KvaultHttpServerOptions, "engine" | "apiKey">>;
}

export async function startInProcessApiServer(options: InProcessApiServerOptions): Promise<InProcessApiServer> {
    const service = await EngineService.start(options.engine ?? toolWindowEngineConfig);
    const listening = await listenApiServer(service, options);
    return {
        ...listening,
        service,
        close: async () => {
            await listening.server.close();
            await service.dispose();
        }
    };
}

/**
 * Another server over an engine already started, with startInProcessApiServer's defaults, for a file
 * that puts several servers (each with its own options) on one engine; the caller closes it.
 */
export async function listenApiServer(
    service: EngineService,
    options: Omit<InProcessApiServerOptions, "engine">
): Promise<ListeningApiServer> {
    const server = new KvaultHttpServer({
        engine: localEngine(service),
        apiKey: options.apiKey,
        host: "127.0.0.1",
        port: 0,
        modelId: "tiny",
        requestTimeoutMs: 120_000,
        ...options.server
    });
    const { url, port, loginLink } = await server.listen();
    return { server, url, port, loginLink };
}
