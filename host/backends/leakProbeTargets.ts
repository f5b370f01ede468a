// The leak probe (probe/) run from the isolation panel: against this Kvault's own API or a
// backend's model, as a client of its HTTP API, exactly as `npm run probe` runs it (one key, two
// identities told apart by their `user` values). The plan and its cost are asked first
// (planLeakProbe); the run (runLeakProbe) sends that plan and nothing more, one run at a time.
import type { LeakProbePlanView, LeakProbeVerdicts } from "../../contract/backends.js";
import { KvaultError } from "../../engine/index.js";
import { discoverEndpoint, ProbeCannotRunError } from "../../probe/discoverEndpoint.js";
import { EndpointClient } from "../../probe/EndpointClient.js";
import { estimateCost, planProbe, ProbePlanError } from "../../probe/probePlan.js";
import { CalibrationFailed, describeIdentities, runLeakProbe } from "../../probe/runLeakProbe.js";
import type { Backends } from "./Backends.js";

/** Kvault's own API, as the headless server listens: its URL, the default key and the model it serves now. */
export interface OwnApi {
    readonly url: string;
    readonly key: string;
    modelId(): string;
}

export class LeakProbeUnavailableError extends KvaultError {
    readonly code = "probe_unavailable";
}

export class LeakProbeBusyError extends KvaultError {
    readonly code = "probe_busy";
}

/** The probe could not run against its target (no usable model list, an answer over the probe's byte cap, calibration not served); `code` is the probe's own. */
export class LeakProbeCannotRunError extends KvaultError {
    constructor(
        readonly code: string,
        message: string,
        options?: { cause?: unknown }
    ) {
        super(message, options);
    }
}

/** probe/'s errors that say the target cannot be probed, as the RPC answers them (a named code, not a bug); anything else as it is. */
function asProbeError(error: unknown): unknown {
    const known = [ProbeCannotRunError, CalibrationFailed, ProbePlanError].some((type) => error instanceof type);
    return known ? new LeakProbeCannotRunError((error as { code: string }).code, (error as Error).message, { cause: error }) : error;
}

/** Answers per probe request and the run in all, ms (the CLI's defaults). */
const PROBE_MAX_TOKENS = 32;
const REQUEST_TIMEOUT_MS = 300_000;
const RUN_DEADLINE_MS = 900_000;

interface Target {
    readonly target: string;
    readonly url: string;
    readonly model: string;
    readonly key: string | undefined;
    readonly remote: boolean;
}

export class LeakProbes {
    #running = false;

    constructor(
        private readonly backends: Backends,
        private readonly ownApi: () => OwnApi | undefined
    ) {}

    async plan(target: string): Promise<LeakProbePlanView> {
        const resolved = this.#resolve(target);
        const client = this.#client(resolved);
        const { window, windowSource } = await discoverEndpoint(client, { a: resolved.key, b: undefined }, undefined).catch(
            (error: unknown) => {
                throw asProbeError(error);
            }
        );
        const cost = estimateCost(planProbe(window, PROBE_MAX_TOKENS));
        return {
            target,
            url: resolved.url,
            model: resolved.model,
            window,
            windowSource,
            numRequests: cost.numRequests,
            promptTokens: cost.promptTokens,
            completionTokens: cost.completionTokens,
            remote: resolved.remote
        };
    }

    async run(target: string): Promise<LeakProbeVerdicts> {
        if (this.#running) {
            throw new LeakProbeBusyError("A leak probe is running already; wait for its verdicts, then run the next one.");
        }
        this.#running = true;
        try {
            const resolved = this.#resolve(target);
            const client = this.#client(resolved);
            const keys = { a: resolved.key, b: undefined };
            const report = await discoverEndpoint(client, keys, undefined)
                .then(({ window, windowSource }) =>
                    runLeakProbe({
                        client,
                        keys,
                        window,
                        windowSource,
                        maxTokens: PROBE_MAX_TOKENS,
                        logprobs: true,
                        deadline: performance.now() + RUN_DEADLINE_MS
                    })
                )
                .catch((error: unknown) => {
                    throw asProbeError(error);
                });
            const { window } = report;
            return {
                target,
                url: resolved.url,
                model: resolved.model,
                identities: describeIdentities(keys),
                window,
                verdict: report.verdict,
                probes: report.probes.map(({ id, title, verdict, reason }) => ({ id, title, verdict, reason })),
                numExchanges: report.exchanges.length,
                elapsedMs: Math.round(report.elapsedMs)
            };
        } finally {
            this.#running = false;
        }
    }

    #client(target: Target): EndpointClient {
        return new EndpointClient({ baseUrl: target.url, model: target.model, kind: "chat", timeoutMs: REQUEST_TIMEOUT_MS });
    }

    /** "kvault" or `NAME/<model id>` as the probe's endpoint, model and key. */
    #resolve(target: string): Target {
        if (target === "kvault") {
            const own = this.ownApi();
            if (own === undefined) {
                throw new LeakProbeUnavailableError(
                    "This Kvault's API is not listening (in the desktop app, switch the local API on in Settings), so the probe has nothing to send to."
                );
            }
            return { target, url: own.url, model: own.modelId(), key: own.key, remote: false };
        }
        const route = this.backends.route(target);
        if (route === undefined) {
            throw new LeakProbeUnavailableError(
                `"${target.slice(0, 200)}" is neither "kvault" nor a backend's model (NAME/<model id>, as listBackends lists them).`
            );
        }
        const { config } = route.backend;
        return { target, url: config.root, model: route.model, key: config.key, remote: config.remote };
    }
}
