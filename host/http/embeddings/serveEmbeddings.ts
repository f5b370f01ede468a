import type { ServerResponse } from "node:http";
import { runApiEmbed, unknownModel, type ApiContext } from "../ApiContext.js";
import { sendJson } from "../httpResponses.js";
import { invalidRequest } from "../OpenAiError.js";
import { parseEmbeddings } from "./parseEmbeddings.js";

/**
 * `POST /v1/embeddings`: one vector per input, in order, from the engine's embedding context, as
 * float lists or as base64 of little-endian float32 (what the openai client decodes). Embeddings hold
 * no workspace state: the same input gives the same vector whoever asks. `received` is the JSON
 * body, read by the caller (a backend's model was forwarded by the gateway before this).
 */
export async function serveEmbeddings(
    context: ApiContext,
    received: unknown,
    response: ServerResponse,
    keyId: string | undefined
): Promise<void> {
    const body = parseEmbeddings(received);
    if (body.model !== context.modelId()) {
        throw unknownModel(context, body.model);
    }
    const dimensions = context.engine.info.embeddingDimensions;
    if (body.dimensions !== undefined && body.dimensions !== dimensions) {
        throw invalidRequest(
            `dimensions is ${body.dimensions}; this model's embeddings have ${dimensions} and Kvault does not shorten them. Send ${dimensions} or leave it out.`,
            "dimensions"
        );
    }
    const result = await runApiEmbed(context, keyId, body.inputs, response);
    const numTokens = result.numTokens.reduce((sum, count) => sum + count, 0);
    return sendJson(response, 200, {
        object: "list",
        data: result.embeddings.map((vector, index) => ({
            object: "embedding",
            index,
            embedding: body.encoding === "float" ? vector : encodeFloat32(vector)
        })),
        model: context.modelId(),
        usage: { prompt_tokens: numTokens, total_tokens: numTokens }
    });
}

/** The vector as base64 of its float32 values, little-endian, as OpenAI sends `encoding_format: "base64"`. */
export function encodeFloat32(vector: readonly number[]): string {
    const bytes = Buffer.alloc(vector.length * 4);
    vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
    return bytes.toString("base64");
}
