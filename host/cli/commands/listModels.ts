import type { ExitCode } from "../exitCodes.js";
import { exitCodes } from "../exitCodes.js";
import { formatSize } from "../formatSize.js";
import { formatTable } from "../formatTable.js";
import type { KvaultClient } from "../KvaultClient.js";
import { listServedModels } from "./findModel.js";

/**
 * `kvault ls`: the models the server can answer with, from /v1/models, one row each: the name the
 * API's `model` takes, the file's size and quantization, the window served, and who serves it
 * (Kvault, or a remote backend's name). `--json` prints the API's own list.
 */
export async function listModels(
    client: KvaultClient,
    options: { readonly json: boolean; readonly output: NodeJS.WritableStream }
): Promise<ExitCode> {
    const models = await listServedModels(client);
    if (options.json) {
        options.output.write(`${JSON.stringify(models, null, 2)}\n`);
        return exitCodes.ok;
    }
    const rows = models.map((model) => [
        model.id,
        model.kvault?.file_bytes === undefined ? "-" : formatSize(model.kvault.file_bytes),
        model.kvault?.quantization ?? "-",
        model.max_model_len === undefined ? "-" : model.max_model_len.toLocaleString("en-US"),
        model.owned_by ?? "-"
    ]);
    options.output.write(`${formatTable([["NAME", "SIZE", "QUANT", "CONTEXT", "SERVED BY"], ...rows])}\n`);
    return exitCodes.ok;
}
