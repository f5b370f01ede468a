// `npm run probe -- --url URL --model ID …`: the leak probe against any OpenAI-compatible
// endpoint. A process of its own that imports nothing of the engine or the host. The report
// goes to stdout (and --json), progress and errors to stderr. Exit 0 clean, 1 finding, 2 could not run.
import fs from "node:fs";
import { EndpointClient } from "./EndpointClient.js";
import { discoverEndpoint, ProbeCannotRunError } from "./discoverEndpoint.js";
import { describeCost, estimateCost, planProbe, ProbePlanError } from "./probePlan.js";
import { isLoopbackUrl, parseProbeOptions, ProbeOptionsError, probeUsage } from "./probeOptions.js";
import { exitCodeOf, formatReport } from "./probeReport.js";
import { CalibrationFailed, runLeakProbe } from "./runLeakProbe.js";

const log = (line: string): void => void process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
    if (process.argv.includes("--help")) {
        process.stdout.write(probeUsage);
        return 0;
    }
    const options = parseProbeOptions(process.argv.slice(2), process.env);
    const deadline = performance.now() + options.deadlineSeconds * 1000;
    const client = new EndpointClient({
        baseUrl: options.url,
        model: options.model,
        kind: options.endpoint,
        timeoutMs: options.timeoutSeconds * 1000
    });
    const keys = { a: options.keyA, b: options.keyB };
    const { window, windowSource } = await discoverEndpoint(client, keys, options.window);
    const plan = planProbe(window, options.maxTokens);
    const cost = estimateCost(plan);
    log(`Window ${window} tokens (${windowSource}). The probe will send ${describeCost(cost)}.`);
    if (plan.length > options.maxRequests) {
        throw new ProbePlanError(
            `The probe needs ${plan.length} requests; --max-requests is ${options.maxRequests}. Raise it to ${plan.length} to run.`
        );
    }
    if (!isLoopbackUrl(client.root) && !options.yes) {
        throw new ProbeCannotRunError(`${client.root} is not loopback and may bill for this: ${describeCost(cost)}. Add --yes to run it.`);
    }
    const report = await runLeakProbe({
        client,
        keys,
        window,
        windowSource,
        maxTokens: options.maxTokens,
        logprobs: options.logprobs,
        deadline,
        log
    });
    process.stdout.write(formatReport(report));
    if (options.json !== undefined) {
        fs.writeFileSync(options.json, `${JSON.stringify(report, null, 2)}\n`);
        log(`The report is in ${options.json}.`);
    }
    return exitCodeOf(report);
}

main().then(
    (code) => process.exit(code),
    (error: unknown) => {
        const known = [ProbeOptionsError, ProbeCannotRunError, ProbePlanError, CalibrationFailed].some((type) => error instanceof type);
        log(
            known
                ? `The leak probe could not run: ${(error as Error).message}`
                : `The leak probe failed: ${(error as Error).stack ?? String(error)}`
        );
        process.exit(2);
    }
);
