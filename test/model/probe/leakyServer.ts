// Kvault's OpenAI-compatible API over an engine with the 2026 incident's guards switched off,
// on loopback, for the leak probe's test alone: the probe must find what this engine leaks.
// The product cannot start such a server (EngineService's policies are for tests of the guards).
import { leakyReader } from "../../../engine/drills/leakyReader.js";
import { skippingScrubber, stubPrefillOverflow, windowOnlyAdmission } from "../../../engine/drills/leakyPolicies.js";
import { EngineService } from "../../../engine/service/EngineService.js";
import { httpDefaults, type KvaultHttpServer } from "../../../host/http/KvaultHttpServer.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { listenApiServer } from "../../support/inProcessApiServer.js";

export interface LeakyServer {
    readonly url: string;
    close(): Promise<void>;
}

/**
 * The incident's engine (engine/drills/runFaultDrill.ts, undersized-prefill-pool, guards off): a
 * 512-token window over a 256-token prefill, requests admitted against the window alone, a
 * one-page stub handed over for what prefill cannot hold, no page count check, freed pages not
 * zeroed. Decode then generates over stale pages holding other workspaces' KV.
 */
export async function startLeakyServer(apiKey: string, extraApiKeys?: KvaultHttpServer["options"]["extraApiKeys"]): Promise<LeakyServer> {
    const service = await EngineService.start(
        {
            modelPath: generatedModelPath("tiny"),
            window: 512,
            prefillContextSize: 256,
            decodeContextSize: 512,
            numDecodeSequences: 1,
            pageTokens: 16,
            numPages: 64,
            inPlacePrefillTokens: 0,
            flashAttention: true,
            gpu: false
        },
        {
            policies: {
                admission: windowOnlyAdmission,
                prefillOverflow: stubPrefillOverflow,
                scrubber: skippingScrubber,
                reader: leakyReader(["pageCount"])
            }
        }
    );
    const { server, url } = await listenApiServer(service, {
        apiKey,
        server: { extraApiKeys, requestTimeoutMs: httpDefaults.requestTimeoutMs }
    });
    return {
        url,
        close: async () => {
            await server.close();
            await service.dispose();
        }
    };
}
