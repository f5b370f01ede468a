import type { CanaryProbeResult, CanaryReport } from "../../contract/isolation.js";
import { workspaceId, type WorkspaceId } from "../core/ids.js";
import { KvaultError } from "../core/KvaultError.js";
import type { KvEngine } from "../KvEngine.js";
import type { ChatRenderer } from "../runtime/ChatRenderer.js";
import type { TokenProbabilities } from "../runtime/SequenceSlot.js";
import { canaryWorkspaceId, randomMarker } from "./canaryMarkers.js";
import { A_MAX_TOKENS, buildCanaryPrompts, CUE_MAX_TOKENS, RECALL_MAX_TOKENS } from "./canaryPrompts.js";
import { pageFingerprints, stateFingerprints, type KvFingerprint } from "./kvFingerprints.js";
import { probeReceivedPages, probeSequenceStates, secretRowsOf, sharedPrefixLength, type ReceivedPage } from "./kvProbes.js";
import { probeLogprobs, probeTextEcho, type ProbeOutput } from "./textProbes.js";

/** Most likely tokens compared per step in the logprobs probe. */
const TOP_LOGPROBS = 40;

/** A canary run was asked for while one runs on the same engine. */
export class CanaryBusyError extends KvaultError {
    readonly code = "canary_running";
}

export interface CanaryOptions {
    /** Tokens of filler between A's two markers; by default as many as the engine's window and free pages allow, at most 4,096. */
    readonly fillerTokens?: number;
}

/** Engines a canary runs on now: one run per engine at a time, whoever asks. */
const running = new WeakSet<KvEngine>();

/**
 * The canary probe (docs/ARCHITECTURE.md, The canary probe; how the 2026 leak was found), on
 * the loaded model: temporary workspace A is sent a long prompt with a random marker at its start
 * and one at its end; then temporary workspace B runs probes that could only find the markers if
 * B saw A's KV. Text probes ask B to repeat what came before and to complete "The secret code is",
 * and compare B's log probabilities for the markers with a fresh context's; on a real model they
 * are the method that found the 2026 leak. The KV probes need no model that can recall: every
 * page B's requests received, written slots and past them, and B's decode sequence itself are
 * searched for A's KV rows, by fingerprint.
 *
 * Both workspaces are forgotten at the end (their pages scrubbed and freed), whatever happened.
 * Users' workspaces keep running meanwhile: A and B queue for decode sequences like any other.
 * One run per engine at a time; a second is refused with CanaryBusyError.
 */
export async function runCanaryProbe(engine: KvEngine, renderer: ChatRenderer, options: CanaryOptions = {}): Promise<CanaryReport> {
    if (running.has(engine)) {
        throw new CanaryBusyError("A canary probe is already running on this engine; one runs at a time. Wait for its report.");
    }
    running.add(engine);
    try {
        return await runOnce(engine, renderer, options);
    } finally {
        running.delete(engine);
    }
}

async function runOnce(engine: KvEngine, renderer: ChatRenderer, options: CanaryOptions): Promise<CanaryReport> {
    const startedAt = performance.now();
    await engine.pool.whenZeroed(); // pages released a moment ago are free once zeroed
    const numFreePagesBefore = engine.pool.numFreePages;
    const markers: [string, string] = [randomMarker(), randomMarker()];
    const prompts = buildCanaryPrompts(engine, renderer, markers, options.fillerTokens);
    const a = workspaceId(canaryWorkspaceId("a"));
    const b = workspaceId(canaryWorkspaceId("b"));
    const { pageTokens } = engine.pool.config;

    // What the pages held when they were sealed: A's rows by position, every slot B's requests received.
    const rowsOfA = new Map<number, KvFingerprint | undefined>();
    /** A's sealed pages' checksums, each with the end of the token range its page holds. */
    const sealedByA = new Map<bigint, number>();
    const receivedByB: (ReceivedPage & { readonly probe: number; refusedWith?: string })[] = [];
    let numProbe = 0;
    let numPagesA = 0;
    let aRunning = true;
    const unwatch = engine.watchSeals((sealed, received, pool) => {
        if (sealed.workspace === a) {
            if (aRunning) {
                numPagesA += sealed.pages.length;
            }
            sealed.pages.forEach((page, index) => {
                const slots = pageFingerprints(pool.inspectRawPage(page), engine.layout, pageTokens);
                const numTokens = Math.min(pageTokens, sealed.tokens.length - index * pageTokens);
                sealedByA.set(sealed.checksums[index]!, index * pageTokens + numTokens);
                for (let slot = 0; slot < numTokens; slot++) {
                    rowsOfA.set(index * pageTokens + slot, slots[slot]);
                }
            });
        } else if (sealed.workspace === b) {
            received.pages.forEach((page, index) =>
                receivedByB.push({
                    page,
                    request: sealed.holder,
                    probe: numProbe,
                    checksum: received.checksums[index] ?? 0n,
                    slots: pageFingerprints(pool.inspectRawPage(page), engine.layout, pageTokens)
                })
            );
        }
    });

    let probes: CanaryProbeResult[];
    let numFreePagesAfter: number;
    try {
        const answerA = await engine.generate({ workspace: a, promptTokens: prompts.a, maxTokens: A_MAX_TOKENS });
        aRunning = false;
        const kvUnavailable = kvUnavailableReason(engine);
        const stateA = kvUnavailable === undefined ? await engine.exportWorkspaceKv(a) : undefined;
        if (stateA !== undefined) {
            // A's KV as decode holds it, its answer's positions included
            stateFingerprints(stateA).forEach((fingerprint, position) => rowsOfA.set(position, fingerprint));
        }

        const recall = await probeB(engine, renderer, b, prompts.recall, RECALL_MAX_TOKENS);
        const stateAfterRecall = kvUnavailable === undefined ? await engine.exportWorkspaceKv(b) : undefined;
        numProbe++;
        const cue = await probeB(engine, renderer, b, prompts.cue, CUE_MAX_TOKENS);
        const stateAfterCue = kvUnavailable === undefined ? await engine.exportWorkspaceKv(b) : undefined;
        const baseline = cue.ok ? await freshProbabilities(engine, prompts.cue, cue.steps.length) : [];

        [recall, cue].forEach((output, probe) => {
            if (!output.ok && output.error.code.startsWith("handoff_")) {
                // verification refused the manifest: nothing of it was assembled
                receivedByB
                    .filter((page) => page.probe === probe)
                    .forEach((page) => {
                        page.refusedWith = output.error.code;
                    });
            }
        });
        const tokensOfA = [...prompts.a, ...answerA.tokens];
        const tokensOfB = [prompts.recall, prompts.cue].map((prompt, index) => {
            const output = [recall, cue][index]!;
            return output.ok ? [...prompt, ...output.tokens] : prompt;
        });
        const numSharedPrefix = Math.max(...tokensOfB.map((tokens) => sharedPrefixLength(tokensOfA, tokens)));
        const secret = secretRowsOf(rowsOfA.entries(), numSharedPrefix);
        // A page wholly inside the shared prefix (a template's system preamble, say) is rightly the same in B.
        const privatePagesOfA = new Set([...sealedByA].filter(([, tokenEnd]) => tokenEnd > numSharedPrefix).map(([checksum]) => checksum));
        const randomWeights = engine.modelName.startsWith("Kvault synthetic");
        probes = [
            probeTextEcho("text-recall", "B cannot repeat A's markers", recall, prompts.markers, randomWeights),
            probeTextEcho("text-cue", 'B does not complete "The secret code is" with A\'s marker', cue, prompts.markers, randomWeights),
            probeLogprobs(cue, baseline, prompts.markers, TOP_LOGPROBS),
            probeReceivedPages(receivedByB, secret, privatePagesOfA, engine.prefill !== undefined),
            probeSequenceStates([stateAfterRecall, stateAfterCue], secret, kvUnavailable)
        ];
    } finally {
        unwatch();
        await forgetQuietly(engine, a);
        await forgetQuietly(engine, b);
        await engine.pool.whenZeroed(); // released pages zeroed off the engine's thread are free once it is done
        numFreePagesAfter = engine.pool.isDisposed ? 0 : engine.pool.numFreePages;
    }
    return {
        passed: probes.every((probe) => probe.outcome !== "failed"),
        modelName: engine.modelName,
        markers,
        fillerTokens: prompts.fillerTokens,
        promptTokens: prompts.a.length,
        numPagesA,
        pageTokens,
        probes,
        numFreePagesBefore,
        numFreePagesAfter,
        durationMs: performance.now() - startedAt
    };
}

/** Why this engine's KV cannot be exported and searched, if it cannot. */
function kvUnavailableReason(engine: KvEngine): string | undefined {
    return engine.decode.layout === undefined
        ? `This model's memory is not a plain KV cache (${engine.mode.reason ?? "unified mode"}), so its rows cannot be exported and searched.`
        : undefined;
}

/** One of B's requests, greedy, with its tokens' probabilities; a request that ends otherwise is kept as its error. */
async function probeB(
    engine: KvEngine,
    renderer: ChatRenderer,
    workspace: WorkspaceId,
    prompt: readonly number[],
    maxTokens: number
): Promise<ProbeOutput> {
    const steps: TokenProbabilities[] = [];
    try {
        const result = await engine.generate({
            workspace,
            promptTokens: prompt,
            maxTokens,
            sampling: { temperature: 0 },
            logprobs: { top: TOP_LOGPROBS },
            onToken: (_token, probabilities) => void (probabilities !== undefined && steps.push(probabilities))
        });
        return { ok: true, tokens: result.tokens, text: renderer.detokenize(result.tokens), steps };
    } catch (error) {
        return {
            ok: false,
            error: {
                code: error instanceof KvaultError ? error.code : "internal_error",
                message: error instanceof Error ? error.message : String(error)
            }
        };
    }
}

/** The same prompt, greedy, alone in a fresh context of its own: the baseline B's probabilities are compared with. */
async function freshProbabilities(engine: KvEngine, prompt: readonly number[], numSteps: number): Promise<TokenProbabilities[]> {
    const steps: TokenProbabilities[] = [];
    if (numSteps === 0) {
        return steps;
    }
    const context = await engine.freshContext(prompt.length + numSteps + 1);
    try {
        const slot = context.acquireSequence()!;
        for await (const _token of slot.generate(
            prompt,
            { temperature: 0 },
            { top: TOP_LOGPROBS, onToken: (entry) => steps.push(entry) }
        )) {
            if (steps.length >= numSteps) {
                break;
            }
        }
        return steps;
    } finally {
        await context.dispose();
    }
}

async function forgetQuietly(engine: KvEngine, workspace: WorkspaceId): Promise<void> {
    try {
        await engine.forgetWorkspace(workspace);
    } catch {
        // The engine was disposed under the run: its pages went with it.
    }
}
