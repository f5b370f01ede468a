import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { Llama, LlamaContextSequence } from "node-llama-cpp";
import type { PageChecks, StateTarget } from "../../codec/statePages.js";
import { invariant } from "../../core/invariant.js";

/**
 * The one place that reaches past node-llama-cpp's public API: its `saveStateToFile` and
 * `loadStateFromFile` (dist/evaluator/LlamaContext/LlamaContext.js, 3.21) done again over the
 * patched addon's in-memory methods (AddonContextStateBuffers.cpp), with the same locks and the
 * same bookkeeping of the sequence's tokens and token predictions. node-llama-cpp is pinned;
 * `inMemoryStateUnsupported` says at start whether this one has what these functions use, so a
 * binary or a release without it gets the file path instead, never a half-working one.
 */

interface PatchedAddonContext {
    saveSequenceStateToBuffer(sequenceId: number, tokens: Uint32Array, target: Uint8Array): Promise<number>;
    saveSequenceStateToChunks(
        sequenceId: number,
        tokens: Uint32Array,
        meta: Uint8Array,
        runs: readonly Uint8Array[],
        ...pageHashes: [] | [runPages: Uint32Array, pages: readonly Uint8Array[], seeds: BigUint64Array, checksums: BigUint64Array]
    ): Promise<number>;
    loadSequenceStateFromChunks(
        sequenceId: number,
        chunks: readonly Uint8Array[],
        maxContextSize: number,
        ...pageChecks:
            | []
            | [
                  chunkPages: Int32Array,
                  pages: readonly Uint8Array[],
                  seeds: BigUint64Array,
                  expected: BigUint64Array,
                  recomputed: BigUint64Array
              ]
    ): Promise<Uint32Array>;
}

/** node-llama-cpp's private members of a context sequence that its own save and load use. */
interface SequenceInternals {
    readonly _sequenceId: number;
    readonly _lock: object;
    readonly _context: { readonly _ctx: PatchedAddonContext };
    _contextTokens: number[];
    _nextTokenIndex: number;
    readonly _loadedTokenPredictions: unknown[];
    _tokenPredictorOwner: object;
    _abortTokenPredictor(skipClearingPredictionsFromState?: boolean): Promise<void>;
    _ensureNotDisposed(): void;
}

interface Lock {
    dispose(): void;
}
type AcquireLock = (scope: readonly [object, string]) => Promise<Lock>;

let acquireLockLoaded: Promise<AcquireLock> | undefined;

/**
 * lifecycle-utils' acquireLock as node-llama-cpp itself loaded it: locks are kept per module
 * instance, so the one resolved from node-llama-cpp's own folder is the one its locks live in.
 */
function nodeLlamaCppAcquireLock(): Promise<AcquireLock> {
    acquireLockLoaded ??= (async () => {
        const nodeLlamaCppEntry = createRequire(import.meta.url).resolve("node-llama-cpp");
        const lifecycleUtils = createRequire(nodeLlamaCppEntry).resolve("lifecycle-utils");
        const loaded = (await import(pathToFileURL(lifecycleUtils).href)) as { acquireLock?: unknown };
        invariant(typeof loaded.acquireLock === "function", () => `lifecycle-utils at ${lifecycleUtils} has no acquireLock`);
        return loaded.acquireLock as AcquireLock;
    })();
    return acquireLockLoaded;
}

/**
 * Why this binding cannot move states through memory, or undefined when it can: the addon must
 * carry the patch's methods, and node-llama-cpp's sequences the members these functions use.
 */
export function inMemoryStateUnsupported(llama: Llama): string | undefined {
    const bindings = (llama as unknown as { _bindings?: { AddonContext?: { prototype?: Partial<PatchedAddonContext> } } })._bindings;
    const addonContext = bindings?.AddonContext?.prototype;
    if (
        typeof addonContext?.saveSequenceStateToBuffer !== "function" ||
        typeof addonContext.saveSequenceStateToChunks !== "function" ||
        typeof addonContext.loadSequenceStateFromChunks !== "function"
    ) {
        return "the loaded llama.cpp binary has no in-memory state methods (they come with Kvault's patch, in `npm run build-llama`'s builds)";
    }
    return undefined;
}

/** The sequence's private members, checked: node-llama-cpp's that this module was written against. */
function internalsOf(sequence: LlamaContextSequence): SequenceInternals {
    const internals = sequence as unknown as Partial<Record<keyof SequenceInternals, unknown>>;
    const context = internals._context as { _ctx?: Partial<PatchedAddonContext> } | undefined;
    const missing = [
        typeof internals._sequenceId === "number" ? undefined : "_sequenceId",
        typeof internals._lock === "object" ? undefined : "_lock",
        typeof context?._ctx?.saveSequenceStateToBuffer === "function" ? undefined : "_context._ctx.saveSequenceStateToBuffer",
        Array.isArray(internals._contextTokens) ? undefined : "_contextTokens",
        typeof internals._nextTokenIndex === "number" ? undefined : "_nextTokenIndex",
        Array.isArray(internals._loadedTokenPredictions) ? undefined : "_loadedTokenPredictions",
        typeof internals._tokenPredictorOwner === "object" ? undefined : "_tokenPredictorOwner",
        typeof internals._abortTokenPredictor === "function" ? undefined : "_abortTokenPredictor",
        typeof internals._ensureNotDisposed === "function" ? undefined : "_ensureNotDisposed"
    ].filter((name) => name !== undefined);
    invariant(
        missing.length === 0,
        () => `node-llama-cpp's context sequence lacks ${missing.join(", ")}, which Kvault's in-memory state path reads`
    );
    return sequence as unknown as SequenceInternals;
}

/** Runs `body` under the sequence's evaluation lock and its context's lock, as node-llama-cpp's state calls do. */
async function underSequenceLocks<T>(internals: SequenceInternals, body: () => Promise<T>): Promise<T> {
    const acquireLock = await nodeLlamaCppAcquireLock();
    const evaluatorLock = await acquireLock([internals._lock, "evaluate"]);
    try {
        const contextLock = await acquireLock([internals._context, "context"]);
        try {
            internals._ensureNotDisposed();
            return await body();
        } finally {
            contextLock.dispose();
        }
    } finally {
        evaluatorLock.dispose();
    }
}

/**
 * Saves the sequence's state into `target` when it holds it; resolves with the state's size either
 * way. `grow` is asked for a bigger target when it does not, and the state saved into that one, in
 * the same locks: no evaluation can change the state in between.
 */
export async function saveSequenceStateInMemory(
    sequence: LlamaContextSequence,
    target: Buffer,
    grow: (numBytes: number) => Buffer
): Promise<Buffer> {
    const internals = internalsOf(sequence);
    return underSequenceLocks(internals, async () => {
        const addon = internals._context._ctx;
        const tokens = Uint32Array.from(internals._contextTokens);
        const numBytes = await addon.saveSequenceStateToBuffer(internals._sequenceId, tokens, target);
        if (numBytes <= target.length) {
            return target.subarray(0, numBytes);
        }
        const grown = grow(numBytes);
        const numBytesAgain = await addon.saveSequenceStateToBuffer(internals._sequenceId, tokens, grown);
        invariant(
            numBytesAgain === numBytes,
            () => `sequence ${internals._sequenceId}'s state was ${numBytes} bytes and then ${numBytesAgain}, under its locks`
        );
        return grown.subarray(0, numBytes);
    });
}

/**
 * Saves the sequence's state split in two: its metadata into `target.meta`, its KV rows into
 * `target.runs` (views of pages), as `planStateTarget` planned them, each page hashed as it is
 * written where `target.pageHashes` asks; resolves with whether it did. It does not, writing
 * nothing, when the state's size is not the target's (the sequence holds other tokens than
 * planned): the caller saves it whole.
 */
export async function saveSequenceStateIntoChunks(sequence: LlamaContextSequence, target: StateTarget): Promise<boolean> {
    const internals = internalsOf(sequence);
    const { meta, runs, runPages, pageHashes } = target;
    const numPlanned = runs.reduce((sum, run) => sum + run.length, meta.length);
    return underSequenceLocks(internals, async () => {
        const tokens = Uint32Array.from(internals._contextTokens);
        const addon = internals._context._ctx;
        const numBytes =
            pageHashes === undefined
                ? await addon.saveSequenceStateToChunks(internals._sequenceId, tokens, meta, runs)
                : await addon.saveSequenceStateToChunks(
                      internals._sequenceId,
                      tokens,
                      meta,
                      runs,
                      runPages,
                      pageHashes.pages,
                      pageHashes.seeds,
                      pageHashes.checksums
                  );
        return numBytes === numPlanned;
    });
}

/**
 * Loads a state in the state file's format, given as runs of bytes in order, into the sequence, as
 * `loadStateFromFile` does: token predictions dropped, the tokens it holds taken from the state.
 * The runs are read on the context's thread: they must stay as they are until the promise settles.
 * With `checks` (`StateChunks.pageChecks`), every page is
 * verified as llama.cpp reads it, and the sequence is left empty where one fails.
 */
export async function loadSequenceStateInMemory(
    sequence: LlamaContextSequence,
    chunks: readonly Uint8Array[],
    checks?: PageChecks
): Promise<void> {
    const internals = internalsOf(sequence);
    await underSequenceLocks(internals, async () => {
        internals._tokenPredictorOwner = {};
        await internals._abortTokenPredictor(true);
        internals._ensureNotDisposed();
        internals._loadedTokenPredictions.length = 0;
        internals._nextTokenIndex = 0;
        internals._contextTokens = [];
        const addon = internals._context._ctx;
        const tokens = Array.from(
            checks === undefined
                ? await addon.loadSequenceStateFromChunks(internals._sequenceId, chunks, sequence.contextSize)
                : await addon.loadSequenceStateFromChunks(
                      internals._sequenceId,
                      chunks,
                      sequence.contextSize,
                      checks.chunkPages,
                      checks.pages,
                      checks.seeds,
                      checks.expected,
                      checks.recomputed
                  )
        );
        internals._contextTokens = tokens;
        internals._nextTokenIndex = tokens.length;
        internals._loadedTokenPredictions.length = 0;
    });
}
