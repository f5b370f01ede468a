import { bytesPerToken } from "../codec/KvLayout.js";
import type { PageId } from "../core/ids.js";
import { StaleCompletionIgnoredError } from "../handoff/integrityErrors.js";
import type { PageManifest } from "../handoff/PageManifest.js";
import type { KvEngine, KvEngineHooks } from "../KvEngine.js";
import {
    A,
    VICTIM,
    countBytesOfA,
    errorOf,
    exportVictimKv,
    fillPagesWithA,
    pagesReservedBy,
    type Scenario,
    type ScenarioOutcome
} from "./drillScenario.js";

const formatCount = (count: number): string => count.toLocaleString("en-US");

/** Tokens of workspace A's turn, and of the victim's, in the drills where decode may compute over pages it never received. */
const NUM_TOKENS_OF_A = { "undersized-prefill-pool": 200, "dropped-pages": 60 } as const;
const NUM_TOKENS_OF_VICTIM = { "undersized-prefill-pool": 300, "dropped-pages": 40 } as const;

/**
 * Workspace A's turn fills pages; the victim's request then needs a handoff that delivers fewer
 * pages than decode reserved for it. With the drill's guard on it must end with its error before
 * a token is decoded; with it off, decode computes over the pages it never received, which hold
 * A's KV on this sandbox's pool that does not zero freed pages, and the victim's own KV is
 * searched for A's bytes.
 */
async function shortHandoff(
    engine: KvEngine,
    hooks: KvEngineHooks,
    prompt: (text: string, count: number) => number[],
    drill: keyof typeof NUM_TOKENS_OF_A,
    describe: (numReceived: number, numReserved: number) => string
): Promise<ScenarioOutcome> {
    const bytesOfA = await fillPagesWithA(engine, hooks, prompt("Workspace A's private ledger entry. ", NUM_TOKENS_OF_A[drill]));
    const victimTokens = prompt("The victim asks its own question, at some length. ", NUM_TOKENS_OF_VICTIM[drill]);
    const numHandedOff = victimTokens.length - 1;
    const pagesReservedBefore = engine.pool.counters.numPagesReserved;
    let reserved: PageId[] = [];
    let numReceived = 0;
    hooks.afterSeal = (manifest, pool) => {
        if (manifest.workspace === VICTIM) {
            reserved = pagesReservedBy(pool, manifest.holder);
            numReceived = manifest.pages.length;
        }
        return manifest;
    };
    const decoded: number[] = [];
    try {
        await engine.generate({
            workspace: VICTIM,
            promptTokens: victimTokens,
            maxTokens: 4,
            onToken: (token) => {
                decoded.push(token);
            }
        });
    } catch (caught) {
        const error = errorOf(caught);
        const numPagesReserved = engine.pool.counters.numPagesReserved - pagesReservedBefore;
        return {
            error: {
                ...error,
                message: `${error.message} (In the sandbox: ${numPagesReserved} pages reserved for the victim, ${decoded.length} tokens decoded.)`
            },
            leak: ""
        };
    }
    const victimKv = await exportVictimKv(engine);
    if (victimKv === undefined || reserved.length === 0) {
        return { error: null, leak: "" };
    }
    const found = countBytesOfA(victimKv, engine.layout, engine.config.pageTokens, numHandedOff, reserved, numReceived, bytesOfA);
    if (found.numBytes === 0) {
        return { error: null, leak: "" };
    }
    return {
        error: null,
        leak:
            `${describe(numReceived, reserved.length)} Decode computed over the ${reserved.length - numReceived} pages it never received: ` +
            `the victim's decode sequence now holds ${formatCount(found.numBytes)} bytes of workspace A's KV (from A's pages ${found.pagesOfA.join(", ")}) ` +
            `among the ${formatCount((numHandedOff - numReceived * engine.config.pageTokens) * bytesPerToken(engine.layout))} bytes at its positions ` +
            `[${numReceived * engine.config.pageTokens}, ${numHandedOff}), and it answered ${decoded.length} tokens as if nothing had happened.`
    };
}

/** The scenarios of the drills where a transfer delivers less, or other, than its reader expects. */
export const transferScenarios: Readonly<Record<"undersized-prefill-pool" | "dropped-pages" | "replayed-completion", Scenario>> = {
    /**
     * The 2026 incident: a request longer than the prefill holds, on an engine that, like that one,
     * hands over a stub, checks no page count and does not zero freed pages. Admission must stop it
     * at the door.
     */
    async "undersized-prefill-pool"(engine, hooks, prompt) {
        return shortHandoff(
            engine,
            hooks,
            prompt,
            "undersized-prefill-pool",
            (numReceived, numReserved) =>
                `The ${formatCount(NUM_TOKENS_OF_VICTIM["undersized-prefill-pool"] + 4)}-token request was admitted against the configured window ` +
                `(${formatCount(engine.config.window)}), though the prefill holds ${formatCount(engine.prefill!.sequenceCapacity)}: prefill handed over ` +
                `${numReceived} page of the ${numReserved} decode reserved and reported the transfer complete.`
        );
    },

    /** The transport delivers the victim's first page only; the manifest lists what arrived. */
    async "dropped-pages"(engine, hooks, prompt) {
        hooks.pagesDelivered = (reservation, numPages) => (reservation.workspace === VICTIM ? 1 : numPages);
        return shortHandoff(
            engine,
            hooks,
            prompt,
            "dropped-pages",
            (numReceived, numReserved) =>
                `The transport delivered ${numReceived} of the victim's ${numReserved} pages, and decode did not count them against the ${NUM_TOKENS_OF_VICTIM["dropped-pages"] - 1} tokens it expected.`
        );
    },

    /**
     * ABA: workspace A's handoff completion for page p arrives again, at the victim's reader, after p
     * was released and reserved again by A's own swap-out, which sealed the same KV bytes into it.
     * The reader's identity checks are off in both runs: the generation tag alone must tell.
     */
    async "replayed-completion"(engine, hooks, prompt) {
        const tokensOfA = prompt("Workspace A's private ledger entry. ", engine.config.pageTokens + 1); // one full page handed off
        let completionOfA: PageManifest | undefined;
        hooks.afterSeal = (manifest) => {
            if (manifest.workspace === A) {
                completionOfA ??= manifest;
            }
            return manifest;
        };
        await engine.generate({ workspace: A, promptTokens: tokensOfA, maxTokens: 2 });
        if (completionOfA === undefined) {
            throw new Error("the drill needs workspace A's turn handed off through pages");
        }
        const stale = completionOfA;

        let own: PageManifest | undefined;
        let loaded: readonly number[] | undefined;
        hooks.earlierArrivals = (manifest) => {
            if (manifest.workspace !== VICTIM) {
                return;
            }
            own = manifest;
            return [stale]; // arrives first; the victim's own completion follows
        };
        hooks.afterLoad = (_request, tokens) => {
            loaded = [...tokens];
        };
        const ignoredBefore = engine.counters.staleCompletionsIgnored;
        let error: { code: string; message: string } | null = null;
        let answer: readonly number[] = [];
        try {
            // Its decode sequence is A's: A is swapped out into pages first, and takes page p again.
            answer = (
                await engine.generate({
                    workspace: VICTIM,
                    promptTokens: prompt("The victim asks its own question. ", engine.config.pageTokens + 1),
                    maxTokens: 4
                })
            ).tokens;
        } catch (caught) {
            error = errorOf(caught);
        }
        const page = stale.pages[0]!;
        const now = engine.pool.pageInfo(page);
        const numIgnored = engine.counters.staleCompletionsIgnored - ignoredBefore;
        if (numIgnored > 0 && error === null && own !== undefined) {
            const ignored = new StaleCompletionIgnoredError(stale, own);
            error = {
                code: ignored.code,
                message: `${ignored.message} The victim was served from its own pages; page ${page} is still ${now.holder}'s at generation ${now.generation}.`
            };
        }
        const numOfA = loaded === undefined ? 0 : stale.tokens.filter((token, index) => loaded![index] === token).length;
        const leaked =
            loaded !== undefined && numOfA === stale.tokens.length && stale.tokens.some((token, index) => token !== own?.tokens[index]);
        return {
            error,
            leak: !leaked
                ? ""
                : `Workspace A's completion for page ${page} (request ${stale.holder}, generation ${stale.generation}) reached the victim's reader after the page ` +
                  `was released and reserved again by ${now.holder} of ${now.workspace} at generation ${now.generation}. Taken by its handle alone, it was applied: ` +
                  `the victim's decode sequence loaded ${numOfA} tokens of A's KV instead of its own, and answered ${answer.length} tokens over it. ` +
                  "The page's checksum still matched (the same bytes under a new owner): only the generation tag could tell the completion was stale."
        };
    }
};
