import type { LlamaContext } from "node-llama-cpp";
import type { ComputeTurns } from "./ComputeTurns.js";

/** node-llama-cpp's private members of a context that the turns replace (3.21). */
interface ComputeInternals {
    readonly _ctx?: { readonly decodeBatch?: () => Promise<void>; readonly setThreads?: (threads: number) => void };
    _reserveThreads?: () => void;
}

/**
 * Makes every batch of `context` compute in its turn (ComputeTurns) with all of the context's
 * threads. node-llama-cpp's thread claims are left out (`_reserveThreads` claims nothing), since no
 * other graph computes beside this one; the context keeps the threads it was made with, and each
 * batch sets them again in case a claim made before this call lowered them. Returns false, and
 * changes nothing, where node-llama-cpp lacks these members: its own thread splitting stands.
 */
export function takeComputeTurns(context: LlamaContext, turns: ComputeTurns): boolean {
    const internals = context as unknown as ComputeInternals;
    const addon = internals._ctx;
    const decodeBatch = addon?.decodeBatch;
    const setThreads = addon?.setThreads;
    if (
        addon === undefined ||
        typeof decodeBatch !== "function" ||
        typeof setThreads !== "function" ||
        typeof internals._reserveThreads !== "function"
    ) {
        return false;
    }
    const threads = context.idealThreads;
    internals._reserveThreads = () => undefined;
    // an own property: the addon's methods are read-only on its prototype
    Object.defineProperty(addon, "decodeBatch", {
        configurable: true,
        value: () =>
            turns.run(() => {
                setThreads.call(addon, threads);
                return decodeBatch.call(addon);
            })
    });
    return true;
}
