// Before any probe: the server answers, the keys are taken, the model is there, and the window
// is known: from --window, else /v1/models (vLLM's max_model_len, others' context_length), else
// llama-server's /props (n_ctx).
import type { EndpointClient } from "./EndpointClient.js";

/** The probe could not run; the message says what happened and what to do. Exit code 2. */
export class ProbeCannotRunError extends Error {
    readonly code = "probe_cannot_run";
}

export interface Discovered {
    readonly window: number;
    /** Where the window came from. */
    readonly windowSource: string;
}

const WINDOW_FIELDS = ["max_model_len", "context_length", "context_window", "max_context_length"] as const;

/** The first positive integer among a model entry's window fields (or its `meta`'s, or `top_provider`'s). */
export function windowOfModelEntry(entry: Record<string, unknown>): { window: number; field: string } | undefined {
    for (const holder of [entry, entry.meta, entry.top_provider]) {
        if (typeof holder !== "object" || holder === null) {
            continue;
        }
        for (const field of WINDOW_FIELDS) {
            const value = (holder as Record<string, unknown>)[field];
            if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) {
                return { window: value, field };
            }
        }
    }
    return undefined;
}

/** llama-server's /props: the slot's `n_ctx` under `default_generation_settings`, else the top-level one. */
export function windowOfProps(body: unknown): number | undefined {
    const props = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
    const settings = props.default_generation_settings as Record<string, unknown> | undefined;
    for (const value of [settings?.n_ctx, props.n_ctx]) {
        if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) {
            return value;
        }
    }
    return undefined;
}

export async function discoverEndpoint(
    client: EndpointClient,
    keys: { readonly a: string | undefined; readonly b: string | undefined },
    windowOption: number | undefined
): Promise<Discovered> {
    const model = client.options.model;
    const listed = await client.getJson("/v1/models", keys.a);
    if (listed.status === 0) {
        throw new ProbeCannotRunError(`${client.root} is unreachable (${listed.failure}). Check --url and that the server is running.`);
    }
    throwIfUnreadable(client, "/v1/models", listed);
    if (listed.status === 401 || listed.status === 403) {
        throw new ProbeCannotRunError(
            `${client.root}/v1/models answered ${listed.status}: the key was refused${keys.a === undefined ? " (none was sent: pass --key-env VAR)" : ""}.`
        );
    }
    if (keys.b !== undefined && keys.b !== keys.a) {
        const second = await client.getJson("/v1/models", keys.b);
        if (second.status === 401 || second.status === 403) {
            throw new ProbeCannotRunError(`${client.root}/v1/models answered ${second.status} to the second key (--second-key-env).`);
        }
    }
    const data = (listed.body as { data?: unknown } | undefined)?.data;
    const entries = Array.isArray(data)
        ? data.filter((entry): entry is Record<string, unknown> => typeof entry === "object" && entry !== null)
        : [];
    if (listed.status !== 200 || !Array.isArray(data)) {
        throw new ProbeCannotRunError(
            `${client.root}/v1/models answered ${listed.status} without a model list: is this an OpenAI-compatible server?`
        );
    }
    const entry = entries.find((candidate) => candidate.id === model);
    if (entry === undefined) {
        const ids = entries.map((candidate) => String(candidate.id)).slice(0, 20);
        throw new ProbeCannotRunError(
            `There is no model "${model}" at ${client.root}: /v1/models lists ${ids.length === 0 ? "none" : ids.join(", ")}.`
        );
    }
    if (windowOption !== undefined) {
        return { window: windowOption, windowSource: "--window" };
    }
    const advertised = windowOfModelEntry(entry);
    if (advertised !== undefined) {
        return { window: advertised.window, windowSource: `/v1/models ${advertised.field}` };
    }
    const props = await client.getJson("/props", keys.a);
    throwIfUnreadable(client, "/props", props);
    const nCtx = props.status === 200 ? windowOfProps(props.body) : undefined;
    if (nCtx !== undefined) {
        return { window: nCtx, windowSource: "/props n_ctx" };
    }
    throw new ProbeCannotRunError(
        `${client.root} does not advertise a window (no max_model_len or context_length in /v1/models, no /props n_ctx): pass --window N, the tokens it serves per request.`
    );
}

/** An answer that came (a status) but could not be read whole (over the byte cap, past the time limit) ends discovery, saying which. */
function throwIfUnreadable(client: EndpointClient, path: string, answer: { readonly status: number; readonly failure?: string }): void {
    if (answer.status !== 0 && answer.failure !== undefined) {
        throw new ProbeCannotRunError(
            `${client.root}${path} answered ${answer.status}, but the answer could not be read: ${answer.failure}.`
        );
    }
}
