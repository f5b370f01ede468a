import fs from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { HUGGING_FACE_URL_VARIABLE } from "../../../host/models/catalogue/HuggingFaceClient.js";
import { ensureGeneratedModel } from "../../support/generatedModels.js";
import { startHuggingFaceServer, type HuggingFaceServer } from "../../support/huggingFaceServer.js";
import { startModelFileServer, type ModelFileServer } from "../../support/modelFileServer.js";

/** The catalogue's smallest file, which the first run's welcome and the demo model's note offer. */
export const SMALLEST_CATALOGUE_FILE = "Qwen3-0.6B-Q4_K_M.gguf";

export interface CatalogueStandIn {
    /** The loopback Hugging Face, once `beforeAll` has started it: the requests it was sent. */
    readonly huggingFace: () => HuggingFaceServer;
    /** The server's environment that points its catalogue there. */
    readonly env: () => Readonly<Record<string, string>>;
}

/**
 * A loopback Hugging Face for a describe block, whose resolve URLs redirect to a loopback file
 * server (real HTTP) serving the catalogue's smallest file's name with a generated model's bytes
 * behind it: "Kvault synthetic small", not the demo. Register it before useKvaultApp, which is
 * given its `env`: hooks after run in reverse, so it stops after the server.
 */
export function useCatalogueStandIn(): CatalogueStandIn {
    let files: ModelFileServer | undefined;
    let huggingFace: HuggingFaceServer | undefined;
    beforeAll(async () => {
        files = await startModelFileServer();
        files.serve(SMALLEST_CATALOGUE_FILE, { body: fs.readFileSync(ensureGeneratedModel("small")), ranges: true });
        huggingFace = await startHuggingFaceServer({ filesUrl: files.url });
    });
    afterAll(async () => {
        await huggingFace?.close();
        await files?.close();
    });
    return {
        huggingFace: () => huggingFace!,
        env: () => ({ [HUGGING_FACE_URL_VARIABLE]: huggingFace!.url })
    };
}
