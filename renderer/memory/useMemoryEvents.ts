import { useEffect, useState } from "react";
import type { MemoryEvent } from "../../contract/memoryEvents.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { usePageMapModelStore } from "../stores/pageMapModelStore.js";

/** How often the timeline asks the engine for new events (ms). */
export const MEMORY_EVENTS_REFRESH_MS = 500;
/** Events the view keeps: the newest, as the engine's ring does (older ones are in the audit record's export). */
export const MEMORY_EVENTS_KEPT = 5_000;

/**
 * The memory events of the model whose page map the view shows (pageMapModelStore: the host's own by
 * default), oldest first, polled after the last one seen; another model chosen, or a restarted
 * engine, is read from its first.
 */
export function useMemoryEvents(): { readonly events: readonly MemoryEvent[]; readonly error: string | undefined } {
    const { rpc } = useAppServices();
    const model = usePageMapModelStore((state) => state.model);
    const [events, setEvents] = useState<readonly MemoryEvent[]>([]);
    const [error, setError] = useState<string | undefined>(undefined);

    useEffect(() => {
        let isCurrent = true;
        let afterSeq = 0;
        setEvents([]);
        let asking = false;
        const load = (): void => {
            if (asking) {
                return;
            }
            asking = true;
            rpc.call("memoryEvents", model === undefined ? { afterSeq } : { afterSeq, model })
                .then(
                    (page) => {
                        if (!isCurrent) {
                            return;
                        }
                        setError(undefined);
                        if (page.lastSeq < afterSeq) {
                            afterSeq = 0; // the engine restarted: its timeline starts again
                            setEvents([]);
                            return;
                        }
                        if (page.events.length > 0) {
                            afterSeq = page.events.at(-1)!.seq;
                            setEvents((kept) => [...kept, ...page.events].slice(-MEMORY_EVENTS_KEPT));
                        }
                    },
                    (failure: unknown) => isCurrent && setError(toRpcError(failure).message)
                )
                .finally(() => {
                    asking = false;
                });
        };
        load();
        const timer = setInterval(load, MEMORY_EVENTS_REFRESH_MS);
        return () => {
            isCurrent = false;
            clearInterval(timer);
        };
    }, [rpc, model]);
    return { events, error };
}
