import type { PagePool } from "../pages/PagePool.js";
import type { PageManifest } from "./PageManifest.js";
import type { PageTransferHooks } from "./PageTransfer.js";

/**
 * Sees a transfer's manifest once its pages are sealed, before the reader verifies it: `sealed` as
 * the writer sealed it, `received` as the reader gets it (the same, unless a drill's hook swapped
 * it). Read-only by contract; it runs on every transfer, so it must be quick.
 */
export type SealWatcher = (sealed: PageManifest, received: PageManifest, pool: PagePool) => void;

/**
 * The hooks a `PageTransfer` runs: the engine's own, and every watcher after `afterSeal`. Every
 * other hook is looked up on `hooks` at each call (it is this object's prototype), so a drill may
 * set or delete hooks after the engine started, and hooks added later need nothing here.
 */
export function watchedTransferHooks(hooks: PageTransferHooks, watchers: ReadonlySet<SealWatcher>): PageTransferHooks {
    const afterSeal = (manifest: PageManifest, pool: PagePool): PageManifest => {
        const received = hooks.afterSeal?.(manifest, pool) ?? manifest;
        for (const watcher of watchers) {
            watcher(manifest, received, pool);
        }
        return received;
    };
    return Object.create(hooks, { afterSeal: { value: afterSeal, enumerable: true } }) as PageTransferHooks;
}
