import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { DrillReport } from "../../contract/isolation.js";
import { type RequestId, requestId as toRequestId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import { KvaultError } from "../core/KvaultError.js";
import type { EngineConfigInput } from "../EngineConfig.js";
import type { PageManifest } from "../handoff/PageManifest.js";
import type { Reservation } from "../pages/Reservation.js";
import type { EnginePolicies } from "../EnginePolicies.js";
import { KvEngine, type KvEngineHooks } from "../KvEngine.js";
import { makeSyntheticModel, SYNTHETIC_MODEL_VERSION } from "../../synthetic/index.js";
import type { LlamaRuntime } from "../runtime/LlamaRuntime.js";
import { drillCatalog, isDrillId, type DrillId } from "./drillCatalog.js";
import { A, B, VICTIM, countDifferentBytes, errorOf, victimRequest, type Scenario, type ScenarioOutcome } from "./drillScenario.js";
import { forgetfulLeases, skippingScrubber, stubPrefillOverflow, windowOnlyAdmission } from "./leakyPolicies.js";
import { leakyReader, type ReaderCheck } from "./leakyReader.js";
import { transferScenarios } from "./transferScenarios.js";

export class UnknownDrillError extends KvaultError {
    readonly code = "unknown_drill";
}

/** The sandbox: a small engine of its own on the tiny model, one decode sequence, 16-token pages. */
const sandboxConfig: Omit<EngineConfigInput, "modelPath"> = {
    window: 256,
    prefillContextSize: 256,
    decodeContextSize: 256,
    numDecodeSequences: 1,
    pageTokens: 16,
    numPages: 48,
    inPlacePrefillTokens: 0,
    flashAttention: true
};

/** Guards a drill switches off: leaky policies in place of the production ones, and the reader's checks switched off. */
interface GuardsOff {
    readonly policies?: Partial<Omit<EnginePolicies, "reader">>;
    readonly readerChecksOff?: readonly ReaderCheck[];
}

/** The guard each drill switches off in its second run: with it off, the leak must be seen. */
const guardsOff: Readonly<Record<DrillId, GuardsOff>> = {
    "foreign-manifest": { readerChecksOff: ["ownership", "pageCount"] },
    "flipped-byte": { readerChecksOff: ["checksums"] },
    "skipped-scrub": { policies: { scrubber: skippingScrubber } },
    "late-write": { policies: { leases: forgetfulLeases } },
    "undersized-prefill-pool": { policies: { admission: windowOnlyAdmission } },
    "dropped-pages": { readerChecksOff: ["pageCount"] },
    "replayed-completion": { readerChecksOff: ["generations"] }
};

/**
 * How a drill's sandbox differs in both runs, where it does: its configuration, and the later
 * guards that would otherwise catch the fault after the drill's own guard let it through. With
 * them off in both runs the two runs differ in the drill's guard alone, so the guarded run shows
 * that guard holding by itself, and the unguarded one the leak it alone prevents.
 */
const sandboxes: Partial<Record<DrillId, { readonly config?: Partial<EngineConfigInput>; readonly guardsOff: GuardsOff }>> = {
    // The 2026 incident's engine: a window above the prefill's capacity, a stub handed over for
    // what prefill cannot hold, no page count check, freed pages not zeroed.
    "undersized-prefill-pool": {
        config: { window: 512, prefillContextSize: 256, decodeContextSize: 512 },
        guardsOff: { policies: { prefillOverflow: stubPrefillOverflow, scrubber: skippingScrubber }, readerChecksOff: ["pageCount"] }
    },
    // Freed pages not zeroed, as in the incident: pages never received then hold someone's KV, not zeros.
    "dropped-pages": { guardsOff: { policies: { scrubber: skippingScrubber } } },
    // No request, workspace or per-page owner checks: the generation tag is all that tells a stale completion.
    "replayed-completion": { guardsOff: { readerChecksOff: ["ownership"] } }
};

/** The policies of a sandbox with every guard in `off` switched off, the production ones elsewhere. */
function policiesWith(...off: (GuardsOff | undefined)[]): Partial<EnginePolicies> {
    const present = off.filter((entry): entry is GuardsOff => entry !== undefined);
    const readerChecksOff = present.flatMap((entry) => entry.readerChecksOff ?? []);
    return Object.assign(
        {},
        ...present.map((entry) => entry.policies),
        readerChecksOff.length === 0 ? {} : { reader: leakyReader(readerChecksOff) }
    ) as Partial<EnginePolicies>;
}

/**
 * Runs a drill twice, each time in a fresh sandboxed engine: with its guard on (the guard must
 * fire with its own error, or hold, and the victim stay clean), then with that guard off (the leak
 * must then be seen: the proof that the drill has teeth). Every other guard is on in both runs,
 * except those the drill's sandbox switches off in both (`sandboxes`). Guards are switched off
 * only here, on engines that serve nothing else.
 */
export async function runFaultDrill(id: string, runtime: LlamaRuntime): Promise<DrillReport> {
    if (!isDrillId(id)) {
        throw new UnknownDrillError(`There is no drill "${id}". Drills: ${drillCatalog.map((drill) => drill.id).join(", ")}.`);
    }
    const description = drillCatalog.find((drill) => drill.id === id)!;
    const startedAt = performance.now();
    const modelPath = drillModelPath();
    const sandbox = sandboxes[id];
    const run = async (policies: Partial<EnginePolicies>): Promise<ScenarioOutcome> => {
        const hooks: KvEngineHooks = {};
        const engine = await KvEngine.start({ modelPath, ...sandboxConfig, ...sandbox?.config }, { runtime, hooks, policies });
        try {
            const prompt = (text: string, count: number): number[] => {
                const tokens = engine.tokenize(text.repeat(Math.ceil(count / 4) + 1));
                return tokens.slice(0, count);
            };
            const outcome = await scenarios[id](engine, hooks, prompt);
            await expectSandboxDrained(engine);
            return outcome;
        } finally {
            await engine.dispose();
        }
    };
    const guarded = await run(policiesWith(sandbox?.guardsOff));
    const unguarded = await run(policiesWith(sandbox?.guardsOff, guardsOff[id]));
    return {
        ...description,
        failureModes: [...description.failureModes],
        guardFired: guarded.error !== null || guarded.leak === "",
        guardError: guarded.error,
        victimClean: guarded.leak === "",
        leakObservedWithGuardOff: unguarded.leak !== "",
        leakEvidence: unguarded.leak === "" ? "No leak was seen with the guard off: the drill has no teeth." : unguarded.leak,
        durationMs: performance.now() - startedAt
    };
}

/**
 * A drill's own bookkeeping must hold in both runs, its guard on or off: once the scenario is
 * over and the workspaces forgotten, no request, lease or reservation is left and every page is
 * back on the free list (zeroed or not: that depends on the guards).
 */
async function expectSandboxDrained(engine: KvEngine): Promise<void> {
    await engine.forgetAllWorkspaces();
    const { pool } = engine;
    invariant(
        engine.numLiveRequests === 0 &&
            pool.numLiveReservations === 0 &&
            pool.numActiveLeases === 0 &&
            pool.numFreePages === pool.config.numPages,
        () =>
            `a drill's sandbox ended with ${engine.numLiveRequests} live requests, ${pool.numLiveReservations} reservations, ` +
            `${pool.numActiveLeases} leases and ${pool.numFreePages} of ${pool.config.numPages} pages free`
    );
}

/** The tiny model the sandboxes load, generated once per machine (a few milliseconds, 0.9 MB). */
function drillModelPath(): string {
    const directory = path.join(os.tmpdir(), "kvault-drills");
    const modelPath = path.join(directory, `tiny-v${SYNTHETIC_MODEL_VERSION}.gguf`);
    if (!fs.existsSync(modelPath)) {
        fs.mkdirSync(directory, { recursive: true });
        makeSyntheticModel("tiny", modelPath);
    }
    return modelPath;
}

const scenarios: Readonly<Record<DrillId, Scenario>> = {
    ...transferScenarios,
    /** Workspace A is swapped out into pages; the victim's handoff is handed A's swap manifest instead of its own. */
    async "foreign-manifest"(engine, hooks, prompt) {
        const tokensOfA = prompt("Workspace A's private ledger entry. ", 40);
        await engine.generate({ workspace: A, promptTokens: tokensOfA, maxTokens: 2 });
        await engine.generate({ workspace: B, promptTokens: prompt("Workspace B says hello. ", 20), maxTokens: 2 }); // swaps A out
        const residency = engine.workspaces().find((workspace) => workspace.id === A)?.residency;
        if (residency?.kind !== "swapped") {
            throw new Error("the drill needs workspace A swapped out into pages");
        }
        const foreign: PageManifest = residency.manifest;
        let loaded: readonly number[] | undefined;
        hooks.afterSeal = (manifest) => (manifest.workspace === VICTIM ? foreign : manifest);
        hooks.afterLoad = (_request: RequestId, tokens) => {
            loaded = [...tokens];
        };
        const error = await victimRequest(engine, prompt("The victim asks its own question. ", 40));
        const leaked = loaded !== undefined && tokensOfA.slice(0, 39).every((token, index) => loaded![index] === token);
        return {
            error,
            leak: leaked
                ? `The victim's decode sequence loaded ${loaded!.length} tokens of workspace A's KV: it would have answered over A's ledger entry.`
                : ""
        };
    },

    /** A byte of the victim's first sealed page flips after sealing. */
    async "flipped-byte"(engine, hooks, prompt) {
        const tokens = prompt("A question whose pages will be corrupted. ", 40);
        const reference = await engine.generate({ workspace: A, promptTokens: tokens, maxTokens: 4 });
        let flipped: { page: number; generation: number } | undefined;
        hooks.afterSeal = (manifest, pool) => {
            if (manifest.workspace === VICTIM) {
                pool.injectByteFlip(manifest.pages[0]!, manifest.generation, 1); // the high byte of the first K value
                flipped = { page: manifest.pages[0]!, generation: manifest.generation };
            }
            return manifest;
        };
        let served: readonly number[] | undefined;
        let error: { code: string; message: string } | null = null;
        try {
            served = (await engine.generate({ workspace: VICTIM, promptTokens: tokens, maxTokens: 4 })).tokens;
        } catch (caught) {
            error = errorOf(caught);
        }
        const leak =
            served === undefined || flipped === undefined
                ? ""
                : `Decode loaded page ${flipped.page} with a flipped byte and computed over it` +
                  (served.join(",") === reference.tokens.join(",")
                      ? " (the answer happened to match; the KV did not)."
                      : `: the answer changed from [${reference.tokens.join(", ")}] to [${served.join(", ")}].`);
        return { error, leak };
    },

    /** Workspace A's pages are released; the victim's shorter handoff reuses them; bytes past the victim's positions are inspected. */
    async "skipped-scrub"(engine, hooks, prompt) {
        await engine.generate({ workspace: A, promptTokens: prompt("Workspace A's private ledger entry. ", 40), maxTokens: 2 });
        await engine.forgetWorkspace(A); // its decode sequence is free: the victim needs no swap, only pages
        const dirtyFree = engine.pool.audit({ scanFreePages: true }).violations.filter((violation) => violation.invariant === "I6").length;
        let stale = 0;
        let pages: readonly number[] = [];
        hooks.afterSeal = (manifest, pool) => {
            if (manifest.workspace === VICTIM) {
                pages = manifest.pages;
                // The victim wrote 19 positions: all of page 0, 3 of page 1. Anything non-zero in
                // page 1's unwritten positions came from someone else.
                const raw = pool.inspectRawPage(manifest.pages[1]!);
                const layout = engine.layout;
                let offset = 0;
                for (const layer of layout.layers) {
                    for (const [rowBytes, count] of [
                        [layer.kRowBytes, 16],
                        [layer.vRowBytes, 16]
                    ] as const) {
                        for (let position = 3; position < count; position++) {
                            for (let byte = 0; byte < rowBytes; byte++) {
                                if (raw[offset + position * rowBytes + byte] !== 0) {
                                    stale++;
                                }
                            }
                        }
                        offset += count * rowBytes;
                    }
                }
            }
            return manifest;
        };
        const error = await victimRequest(engine, prompt("The victim asks its own question. ", 20));
        return {
            error,
            leak:
                stale === 0
                    ? ""
                    : `${dirtyFree} free pages were not zeroed (audit I6), and the victim's page ${pages[1]} held ${stale} bytes of workspace A's KV past its own 3 positions.`
        };
    },

    /**
     * Workspace A's transfer is cancelled while its writer is slow; the victim's pages are reserved at
     * once; A's write then lands. A's request settles only once its write is done (llama.cpp's save
     * into the pages, or the scatter), so the victim's pages are looked at after it, not at a timer
     * that a slow save outlasts.
     */
    async "late-write"(engine, hooks, prompt) {
        const controller = new AbortController();
        const refusedBefore = engine.pool.counters.staleWritesRefused;
        let victim: { readonly reservation: Reservation; readonly pattern: Uint8Array } | undefined;
        hooks.beforeTransferWrite = async () => {
            delete hooks.beforeTransferWrite;
            controller.abort();
            // The victim's transfer: pages reserved and written at once with its own bytes.
            const reservation = engine.pool.reserve({
                workspace: VICTIM,
                holder: toRequestId("drill-victim-transfer"),
                numPages: 3,
                firstToken: 0
            });
            const pattern = new Uint8Array(engine.pool.config.pageBytes).fill(0x5a);
            for (const handle of reservation.pages) {
                const leased = engine.pool.acquireWriteLease(handle.pageId, handle.generation);
                if (!leased.ok) {
                    throw leased.error;
                }
                leased.lease.write(0, pattern);
                leased.lease.release();
                engine.pool.seal(handle.pageId, handle.generation);
            }
            victim = { reservation, pattern };
        };
        let error: { code: string; message: string } | null = null;
        try {
            await engine.generate({
                workspace: A,
                promptTokens: prompt("Workspace A's private ledger entry. ", 40),
                maxTokens: 2,
                signal: controller.signal
            });
        } catch (caught) {
            error = errorOf(caught);
        }
        // A's late write has had its chance: look at the victim's pages.
        let overwritten = 0;
        if (victim !== undefined) {
            for (const handle of victim.reservation.pages) {
                overwritten += countDifferentBytes(engine.pool.inspectRawPage(handle.pageId), victim.pattern);
            }
            engine.pool.release(victim.reservation);
        }
        const refused = engine.pool.counters.staleWritesRefused > refusedBefore;
        if (refused && error !== null) {
            error = {
                code: "stale_write_refused",
                message: `The cancelled transfer's late write was refused by the pool (its pages were quarantined, not reused); the request ended with: ${error.message}`
            };
        }
        return {
            error,
            leak:
                overwritten === 0
                    ? ""
                    : `The cancelled request's late write overwrote ${overwritten} bytes of the victim's sealed pages with its own KV.`
        };
    }
};
