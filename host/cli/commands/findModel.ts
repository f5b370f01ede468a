import { CliError } from "../CliError.js";
import type { KvaultClient } from "../KvaultClient.js";

/** An entry of /v1/models as the command reads it. */
export interface ServedModel {
    readonly id: string;
    readonly owned_by?: string;
    /** The window the server serves, tokens (vLLM's field). */
    readonly max_model_len?: number;
    readonly kvault?: {
        readonly file_bytes?: number;
        readonly quantization?: string | null;
        readonly architecture?: string;
        readonly context_window?: number | null;
    };
}

export async function listServedModels(client: KvaultClient): Promise<readonly ServedModel[]> {
    const { data } = await client.getJson<{ data: ServedModel[] }>("/v1/models");
    return data;
}

/** The model by id, or the server's first (the loaded local model) when no id is given; an unknown id names the ones there are. */
export async function findModel(client: KvaultClient, id: string | undefined): Promise<ServedModel> {
    const models = await listServedModels(client);
    const found = id === undefined ? models[0] : models.find((model) => model.id === id);
    if (found === undefined) {
        const names = models.map((model) => model.id).join(", ") || "none";
        throw new CliError(
            id === undefined
                ? `Kvault at ${client.baseUrl} serves no model.`
                : `Kvault at ${client.baseUrl} has no model ${JSON.stringify(id)}; it serves: ${names}. \`kvault ls\` lists them.`,
            "model_unknown"
        );
    }
    return found;
}
