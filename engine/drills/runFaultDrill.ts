import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { DrillReport } from "../../contract/isolation.js";
import { sessionId, type RequestId, requestId as toRequestId } from "../core/ids.js";
import { KvaultError } from "../core/KvaultError.js";
import type { EngineConfigInput } from "../EngineConfig.js";
import type { PageManifest } from "../handoff/PageManifest.js";
import { KvEngine, type EngineGuards, type KvEngineHooks } from "../KvEngine.js";
import { makeSyntheticModel } from "../model/makeSyntheticModel.js";
import { SYNTHETIC_MODEL_VERSION } from "../model/syntheticModel.js";
import type { LlamaRuntime } from "../runtime/LlamaRuntime.js";
import { drillCatalog, isDrillId, type DrillId } from "./drillCatalog.js";

export class UnknownDrillError extends KvaultError {
    readonly code = "unknown_drill";
}

/** The sandbox: a small engine of its own on the tiny model, one decode sequence, 16-token pages. */
const sandboxConfig: Omit<EngineConfigInput, "modelPath"> = {
    window: 256, prefillContextSize: 256, decodeContextSize: 256, numDecodeSequences: 1,
    pageTokens: 16, numPages: 48, inPlacePrefillTokens: 0, flashAttention: true
};

/** What one run of a scenario saw: the error the victim's request ended with, and the evidence of a leak, if any. */
interface ScenarioOutcome {
    readonly error: { readonly code: string; readonly message: string } | null;
    /** Empty when no byte of another request reached the victim; else what was seen. */
    readonly leak: string;
}

type Scenario = (engine: KvEngine, hooks: KvEngineHooks, prompt: (text: string, count: number) => number[]) => Promise<ScenarioOutcome>;

const guardsOff: Readonly<Record<DrillId, EngineGuards>> = {
    "foreign-manifest": { handoff: { ownership: false, checksums: true } },
    "flipped-byte": { handoff: { ownership: true, checksums: false } },
    "skipped-scrub": { pool: { skipScrub: true } },
    "late-write": { pool: { reuseWhileLeased: true, acceptStaleWrites: true } }
};

/**
 * Runs a drill twice, each time in a fresh sandboxed engine: with every guard on (the guard must
 * fire with its own error, or hold, and the victim stay clean), then with the drill's guard off
 * (the leak must then be seen: the proof that the drill has teeth). Guards are switched off only
 * here, on engines that serve nothing else.
 */
export async function runFaultDrill(id: string, runtime: LlamaRuntime): Promise<DrillReport> {
    if (!isDrillId(id))
        throw new UnknownDrillError(`There is no drill "${id}". Drills: ${drillCatalog.map((drill) => drill.id).join(", ")}.`);
    const description = drillCatalog.find((drill) => drill.id === id)!;
    const startedAt = performance.now();
    const modelPath = drillModelPath();
    const run = async (guards: EngineGuards | undefined): Promise<ScenarioOutcome> => {
        const hooks: KvEngineHooks = {};
        const engine = await KvEngine.start({ modelPath, ...sandboxConfig }, { runtime, hooks, guards });
        try {
            const prompt = (text: string, count: number): number[] => {
                const tokens = engine.tokenize(text.repeat(Math.ceil(count / 4) + 1));
                return tokens.slice(0, count);
            };
            return await scenarios[id](engine, hooks, prompt);
        } finally {
            await engine.dispose();
        }
    };
    const guarded = await run(undefined);
    const unguarded = await run(guardsOff[id]);
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

const A = sessionId("drill-workspace-a");
const B = sessionId("drill-workspace-b");
const VICTIM = sessionId("drill-victim");

function errorOf(error: unknown): { code: string; message: string } {
    return { code: error instanceof KvaultError ? error.code : "internal_error", message: error instanceof Error ? error.message : String(error) };
}

/** Runs the victim's request, returning its error (null when served). */
async function victimRequest(engine: KvEngine, tokens: number[]): Promise<{ code: string; message: string } | null> {
    try {
        await engine.generate({ session: VICTIM, promptTokens: tokens, maxTokens: 4 });
        return null;
    } catch (error) {
        return errorOf(error);
    }
}

function countDifferentBytes(a: Uint8Array, b: Uint8Array): number {
    let count = 0;
    for (let index = 0; index < Math.min(a.length, b.length); index++)
        if (a[index] !== b[index]) count++;
    return count;
}

const scenarios: Readonly<Record<DrillId, Scenario>> = {
    /** Workspace A is swapped out into pages; the victim's handoff is handed A's swap manifest instead of its own. */
    async "foreign-manifest"(engine, hooks, prompt) {
        const tokensOfA = prompt("Workspace A's private ledger entry. ", 40);
        await engine.generate({ session: A, promptTokens: tokensOfA, maxTokens: 2 });
        await engine.generate({ session: B, promptTokens: prompt("Workspace B says hello. ", 20), maxTokens: 2 }); // swaps A out
        const residency = engine.sessions().find((session) => session.id === A)?.residency;
        if (residency?.kind !== "swapped")
            throw new Error("the drill needs workspace A swapped out into pages");
        const foreign: PageManifest = residency.manifest;
        let loaded: readonly number[] | undefined;
        hooks.afterSeal = (manifest) => manifest.session === VICTIM ? foreign : manifest;
        hooks.afterLoad = (_request: RequestId, tokens) => { loaded = [...tokens]; };
        const error = await victimRequest(engine, prompt("The victim asks its own question. ", 40));
        const leaked = loaded !== undefined && tokensOfA.slice(0, 39).every((token, index) => loaded![index] === token);
        return { error, leak: leaked ? `The victim's decode sequence loaded ${loaded!.length} tokens of workspace A's KV: it would have answered over A's ledger entry.` : "" };
    },

    /** A byte of the victim's first sealed page flips after sealing. */
    async "flipped-byte"(engine, hooks, prompt) {
        const tokens = prompt("A question whose pages will be corrupted. ", 40);
        const reference = await engine.generate({ session: A, promptTokens: tokens, maxTokens: 4 });
        let flipped: { page: number; generation: number } | undefined;
        hooks.afterSeal = (manifest, pool) => {
            if (manifest.session === VICTIM) {
                pool.injectByteFlip(manifest.pages[0]!, manifest.generation, 1); // the high byte of the first K value
                flipped = { page: manifest.pages[0]!, generation: manifest.generation };
            }
            return manifest;
        };
        let served: readonly number[] | undefined;
        let error: { code: string; message: string } | null = null;
        try {
            served = (await engine.generate({ session: VICTIM, promptTokens: tokens, maxTokens: 4 })).tokens;
        } catch (caught) {
            error = errorOf(caught);
        }
        const leak = served === undefined || flipped === undefined ? "" :
            `Decode loaded page ${flipped.page} with a flipped byte and computed over it` +
            (served.join(",") === reference.tokens.join(",") ? " (the answer happened to match; the KV did not)." : `: the answer changed from [${reference.tokens.join(", ")}] to [${served.join(", ")}].`);
        return { error, leak };
    },

    /** Workspace A's pages are released; the victim's shorter handoff reuses them; bytes past the victim's positions are inspected. */
    async "skipped-scrub"(engine, hooks, prompt) {
        await engine.generate({ session: A, promptTokens: prompt("Workspace A's private ledger entry. ", 40), maxTokens: 2 });
        await engine.forgetSession(A); // its decode sequence is free: the victim needs no swap, only pages
        const dirtyFree = engine.pool.audit({ scanFreePages: true }).violations.filter((violation) => violation.invariant === "I6").length;
        let stale = 0;
        let pages: readonly number[] = [];
        hooks.afterSeal = (manifest, pool) => {
            if (manifest.session === VICTIM) {
                pages = manifest.pages;
                // The victim wrote 19 positions: all of page 0, 3 of page 1. Anything non-zero in
                // page 1's unwritten positions came from someone else.
                const raw = pool.inspectRawPage(manifest.pages[1]!);
                const layout = engine.layout;
                let offset = 0;
                for (const layer of layout.layers) {
                    for (const [rowBytes, count] of [[layer.kRowBytes, 16], [layer.vRowBytes, 16]] as const) {
                        for (let position = 3; position < count; position++)
                            for (let byte = 0; byte < rowBytes; byte++)
                                if (raw[offset + position * rowBytes + byte] !== 0) stale++;
                        offset += count * rowBytes;
                    }
                }
            }
            return manifest;
        };
        const error = await victimRequest(engine, prompt("The victim asks its own question. ", 20));
        return {
            error,
            leak: stale === 0 ? "" : `${dirtyFree} free pages were not zeroed (audit I6), and the victim's page ${pages[1]} held ${stale} bytes of workspace A's KV past its own 3 positions.`
        };
    },

    /** Workspace A's transfer is cancelled while its writer is slow; the victim's pages are reserved at once; A's write then lands. */
    async "late-write"(engine, hooks, prompt) {
        const controller = new AbortController();
        let overwritten = 0;
        let refused = false;
        const refusedBefore = engine.pool.counters.staleWritesRefused;
        hooks.beforeTransferWrite = async () => {
            delete hooks.beforeTransferWrite;
            controller.abort();
            // The victim's transfer: pages reserved and written at once with its own bytes.
            const reservation = engine.pool.reserve({ session: VICTIM, request: toRequestId("drill-victim-transfer"), numPages: 3, firstToken: 0 });
            const pattern = new Uint8Array(engine.pool.config.pageBytes).fill(0x5a);
            for (const handle of reservation.pages) {
                const leased = engine.pool.acquireWriteLease(handle.pageId, handle.generation);
                if (!leased.ok) throw leased.error;
                leased.lease.write(0, pattern);
                leased.lease.release();
                engine.pool.seal(handle.pageId, handle.generation);
            }
            // Once A's late write has had its chance, look at the victim's pages.
            setTimeout(() => {
                for (const handle of reservation.pages)
                    overwritten += countDifferentBytes(engine.pool.inspectRawPage(handle.pageId), pattern);
                refused = engine.pool.counters.staleWritesRefused > refusedBefore;
                engine.pool.release(reservation);
            }, 0);
        };
        let error: { code: string; message: string } | null = null;
        try {
            await engine.generate({ session: A, promptTokens: prompt("Workspace A's private ledger entry. ", 40), maxTokens: 2, signal: controller.signal });
        } catch (caught) {
            error = errorOf(caught);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (refused && error !== null)
            error = { code: "stale_write_refused", message: `The cancelled transfer's late write was refused by the pool (its pages were quarantined, not reused); the request ended with: ${error.message}` };
        return { error, leak: overwritten === 0 ? "" : `The cancelled request's late write overwrote ${overwritten} bytes of the victim's sealed pages with its own KV.` };
    }
};
