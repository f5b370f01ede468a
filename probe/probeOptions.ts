// `npm run probe -- …`'s command line: every option checked, every problem a ProbeOptionsError
// naming the option (exit 2), never a default silently put in the place of a bad value.
import type { EndpointKind } from "./EndpointClient.js";

export interface ProbeOptions {
    readonly url: string;
    readonly model: string;
    readonly endpoint: EndpointKind;
    /** The keys themselves, read from the environment variables named. */
    readonly keyA: string | undefined;
    readonly keyB: string | undefined;
    readonly window: number | undefined;
    readonly maxRequests: number;
    readonly maxTokens: number;
    readonly deadlineSeconds: number;
    readonly timeoutSeconds: number;
    readonly json: string | undefined;
    readonly yes: boolean;
    /** Whether the divergence probe asks for log-probabilities (off with --no-logprobs). */
    readonly logprobs: boolean;
}

export class ProbeOptionsError extends Error {
    readonly code = "probe_options_invalid";
}

export const probeUsage = `Usage: npm run probe -- --url URL --model ID [options]

Audits an OpenAI-compatible endpoint for leaks between two identities: markers at the start and
end of filler text, a sweep of prompt lengths across the window, recall and completion probes, a
divergence probe and a cancel-during-prefill race. Exit 0: no finding; 1: a finding; 2: could not run.

  --url URL               the server (http://host:port, with or without /v1)
  --model ID              the model id, as its /v1/models lists it
  --key-env VAR           identity A's key is in this environment variable (and B's, without --second-key-env)
  --second-key-env VAR    identity B's key; without it the identities differ by their user values only
  --window N              tokens per request the server serves (default: /v1/models max_model_len or
                          context_length, else /props n_ctx)
  --endpoint chat|completions   /v1/chat/completions (default) or /v1/completions
  --max-requests N        refuse to start if the plan needs more POST requests than this (default 40)
  --max-tokens N          completion tokens per request (default 32)
  --deadline S            stop sending after S seconds; what is left is inconclusive (default 900)
  --timeout S             per request, in seconds (default 300)
  --json FILE             also write the report as JSON
  --no-logprobs           do not ask for log-probabilities (for a server that refuses them); the
                          divergence probe then compares B's answers by their text alone
  --yes                   run against a URL that is not loopback (it prints the cost estimate first)
`;

export function parseProbeOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ProbeOptions {
    const values = new Map<string, string>();
    let yes = false;
    let logprobs = true;
    for (let index = 0; index < argv.length; index += 1) {
        const arg = argv[index]!;
        if (arg === "--yes") {
            yes = true;
            continue;
        }
        if (arg === "--no-logprobs") {
            logprobs = false;
            continue;
        }
        const [name, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
        if (!KNOWN.has(name)) {
            throw new ProbeOptionsError(`Unknown option ${JSON.stringify(arg)}. ${name === "--help" ? "" : "See --help."}`.trim());
        }
        const value = inline ?? argv[index + 1];
        if (value === undefined || (inline === undefined && value.startsWith("--"))) {
            throw new ProbeOptionsError(`${name} needs a value.`);
        }
        if (inline === undefined) {
            index += 1;
        }
        if (values.has(name)) {
            throw new ProbeOptionsError(`${name} is given twice.`);
        }
        values.set(name, value);
    }
    const url = values.get("--url");
    const model = values.get("--model");
    if (url === undefined || model === undefined) {
        throw new ProbeOptionsError("--url and --model are required. See --help.");
    }
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        throw new ProbeOptionsError(`--url ${JSON.stringify(url)} is not a URL; give e.g. http://127.0.0.1:8080.`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
        throw new ProbeOptionsError(`--url must be http: or https:, not ${parsed.protocol}`);
    }
    const endpoint = values.get("--endpoint") ?? "chat";
    if (endpoint !== "chat" && endpoint !== "completions") {
        throw new ProbeOptionsError(`--endpoint is chat or completions, not ${JSON.stringify(endpoint)}.`);
    }
    return {
        url,
        model,
        endpoint,
        keyA: keyFrom(values.get("--key-env"), "--key-env", env),
        keyB: keyFrom(values.get("--second-key-env"), "--second-key-env", env),
        window: optionalInteger(values.get("--window"), "--window", 64, 100_000_000),
        maxRequests: optionalInteger(values.get("--max-requests"), "--max-requests", 1, 10_000) ?? 40,
        maxTokens: optionalInteger(values.get("--max-tokens"), "--max-tokens", 1, 4096) ?? 32,
        deadlineSeconds: optionalInteger(values.get("--deadline"), "--deadline", 1, 86_400) ?? 900,
        timeoutSeconds: optionalInteger(values.get("--timeout"), "--timeout", 1, 3600) ?? 300,
        json: values.get("--json"),
        yes,
        logprobs
    };
}

const KNOWN = new Set([
    "--url",
    "--model",
    "--key-env",
    "--second-key-env",
    "--window",
    "--endpoint",
    "--max-requests",
    "--max-tokens",
    "--deadline",
    "--timeout",
    "--json"
]);

function keyFrom(variable: string | undefined, option: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
    if (variable === undefined) {
        return undefined;
    }
    const key = env[variable];
    if (key === undefined || key === "") {
        throw new ProbeOptionsError(`${option} names ${variable}, but that environment variable is not set.`);
    }
    return key;
}

function optionalInteger(value: string | undefined, option: string, min: number, max: number): number | undefined {
    if (value === undefined) {
        return undefined;
    }
    const number = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min || number > max) {
        throw new ProbeOptionsError(`${option} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}.`);
    }
    return number;
}

/** Loopback hosts: the probe runs against these without --yes. */
export function isLoopbackUrl(url: string): boolean {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
