import { useEffect } from "react";
import { decodeSnapshot } from "../pageMap/decodeSnapshot.js";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { pollWhileVisible } from "../rpc/pollWhileVisible.js";
import { toRpcError } from "../rpc/RpcError.js";
import { engineProblemOf } from "./engineProblem.js";
import { useEngineStore } from "./engineStore.js";
import { snapshotParams, usePageMapModelStore } from "./pageMapModelStore.js";
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
        const loop = pollWhileVisible(
            rpc,
            () => (useUiStore.getState().pageMapOpen ? snapshotIntervalsMs.pageMap : snapshotIntervalsMs.counters),
            async () => {
                const lateTimer = setTimeout(() => engine.setState({ snapshotLate: true }), SNAPSHOT_LATE_MS);
                try {
                    const snapshot = decodeSnapshot(await rpc.call("snapshot", snapshotParams()));
                    if (!loop.disposed) {
                        engine.setState({ snapshot, snapshotError: undefined, engineProblem: undefined });
                    }
                } catch (error) {
                    if (!loop.disposed && rpc.status.kind === "open") {
                        engine.setState({ snapshotError: toRpcError(error).message, engineProblem: engineProblemOf(error) });
                    }
                } finally {
                    clearTimeout(lateTimer);
                    if (!loop.disposed && engine.getState().snapshotLate) {
                        engine.setState({ snapshotLate: false });
                    }
                }
            }
        );

        const loadInfo = (): void => {
            rpc.call("info", {}).then(
                (info) => {
                    if (!loop.disposed) {
                        engine.setState({ info, infoError: undefined });
                    }
                },
                (error: unknown) => {
                    if (!loop.disposed) {
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
            }
        });
        const unsubscribeUi = useUiStore.subscribe((state, previous) => {
            if (state.pageMapOpen && !previous.pageMapOpen) {
                void loop.poll();
            }
        });
        // another model's page map at once, not after the next interval
        const unsubscribeModel = usePageMapModelStore.subscribe(() => void loop.poll());
        if (rpc.status.kind === "open") {
            loadInfo();
        }
        void loop.poll();

        return () => {
            loop.dispose();
            unsubscribeStatus();
            unsubscribeUi();
            unsubscribeModel();
        };
    }, [rpc]);
}
