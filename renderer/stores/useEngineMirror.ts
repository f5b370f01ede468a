import { useEffect } from "react";
import { decodeSnapshot } from "../pageMap/decodeSnapshot.js";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { toRpcError } from "../rpc/RpcError.js";
import { engineProblemOf } from "./engineProblem.js";
import { useEngineStore } from "./engineStore.js";
import { useUiStore } from "./uiStore.js";

/** Between snapshots while the page map is on screen (8 a second), and while only counters are. */
export const snapshotIntervalsMs = { pageMap: 125, counters: 1_000 } as const;

/** A snapshot unanswered for this long marks the one on screen as late (ms). */
export const SNAPSHOT_LATE_MS = 1_500;

/**
 * Keeps engineStore equal to the engine: the connection's status, `info` on every connect, and
 * `snapshot` polled one at a time (never overlapping) while the page is visible.
 */
export function useEngineMirror(rpc: KvaultRpc): void {
    useEffect(() => {
        const engine = useEngineStore;
        let disposed = false;
        let inFlight = false;
        let timer: ReturnType<typeof setTimeout> | undefined;

        const poll = async (): Promise<void> => {
            clearTimeout(timer);
            timer = undefined;
            if (disposed || inFlight) {
                return;
            }
            if (rpc.status.kind === "open" && document.visibilityState === "visible") {
                inFlight = true;
                const lateTimer = setTimeout(() => engine.setState({ snapshotLate: true }), SNAPSHOT_LATE_MS);
                try {
                    const snapshot = decodeSnapshot(await rpc.call("snapshot", {}));
                    if (!disposed) {
                        engine.setState({ snapshot, snapshotError: undefined, engineProblem: undefined });
                    }
                } catch (error) {
                    if (!disposed && rpc.status.kind === "open") {
                        engine.setState({ snapshotError: toRpcError(error).message, engineProblem: engineProblemOf(error) });
                    }
                } finally {
                    clearTimeout(lateTimer);
                    inFlight = false;
                    if (!disposed && engine.getState().snapshotLate) {
                        engine.setState({ snapshotLate: false });
                    }
                }
            }
            if (!disposed && document.visibilityState === "visible") {
                timer = setTimeout(
                    () => void poll(),
                    useUiStore.getState().pageMapOpen ? snapshotIntervalsMs.pageMap : snapshotIntervalsMs.counters
                );
            }
        };

        const loadInfo = (): void => {
            rpc.call("info", {}).then(
                (info) => {
                    if (!disposed) {
                        engine.setState({ info, infoError: undefined });
                    }
                },
                (error: unknown) => {
                    if (!disposed) {
                        engine.setState({ infoError: toRpcError(error).message, engineProblem: engineProblemOf(error) });
                    }
                }
            );
        };

        engine.setState({ connection: rpc.status });
        const unsubscribeStatus = rpc.onStatus((connection) => {
            engine.setState({ connection });
            if (connection.kind === "open") {
                loadInfo();
                void poll();
            }
        });
        const unsubscribeUi = useUiStore.subscribe((state, previous) => {
            if (state.pageMapOpen && !previous.pageMapOpen) {
                void poll();
            }
        });
        const onVisibility = (): void => void poll();
        document.addEventListener("visibilitychange", onVisibility);
        if (rpc.status.kind === "open") {
            loadInfo();
        }
        void poll();

        return () => {
            disposed = true;
            clearTimeout(timer);
            unsubscribeStatus();
            unsubscribeUi();
            document.removeEventListener("visibilitychange", onVisibility);
        };
    }, [rpc]);
}
