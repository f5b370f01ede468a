import type { DrillReport, ReplaySummary } from "../../contract/isolation";
import type { KvaultRpc } from "../rpc/KvaultRpc";
import { toRpcError } from "../rpc/RpcError";
import type { IsolationFailure, IsolationRun, IsolationStore } from "../stores/isolationStore";
import type { createTurnStore } from "../stores/turnStore";

/** Between audits (and refreshes of the replayable turns) while the isolation panel is on screen. */
export const AUDIT_INTERVAL_MS = 5_000;

export interface IsolationControllerStores {
    readonly isolation: IsolationStore;
    /** Read only to notice a turn ending: it may have become replayable. */
    readonly turns: ReturnType<typeof createTurnStore>;
}

/** Whether the panel can be seen now; the watch polls only while it can. */
export interface IsolationView {
    isOpen(): boolean;
    isVisible(): boolean;
}

export interface IsolationWatch {
    /** Audits and refreshes now, if the panel can be seen (it just opened, or the page became visible). */
    refresh(): void;
    stop(): void;
}

/**
 * The isolation panel's actions: the audit (on demand, and every few seconds while the panel is
 * on screen), differential replay of a finished turn, and fault drills. Each call's answer goes
 * to the isolation store; a failure is kept there with the engine's code, never thrown.
 */
export class IsolationController {
    constructor(
        private readonly rpc: KvaultRpc,
        private readonly stores: IsolationControllerStores,
        private readonly now: () => number = Date.now
    ) {}

    /** Runs the audit unless one is in flight. */
    async audit(): Promise<void> {
        const store = this.stores.isolation;
        if (store.getState().audit.running)
            return;
        store.setState((state) => ({ audit: { ...state.audit, running: true } }));
        try {
            const summary = await this.rpc.call("audit", {});
            store.setState({ audit: { running: false, summary, checkedAt: this.now() } });
        } catch (error) {
            // No old "ok" left on screen beside a failure: the audit's verdict is now unknown.
            store.setState({ audit: { running: false, error: failure(error), checkedAt: this.now() } });
        }
    }

    async refreshReplayable(): Promise<void> {
        const store = this.stores.isolation;
        try {
            const turns = await this.rpc.call("replayableTurns", {});
            store.setState({ replayable: { turns } });
        } catch (error) {
            store.setState((state) => ({ replayable: { turns: state.replayable.turns, error: failure(error) } }));
        }
    }

    /** Replays the turn alone in a fresh context and compares it token by token; once at a time per turn. */
    async replay(requestId: string): Promise<void> {
        const store = this.stores.isolation;
        if (store.getState().replays[requestId]?.running === true)
            return;
        const put = (run: IsolationRun<ReplaySummary>): void =>
            store.setState((state) => ({ replays: { ...state.replays, [requestId]: run } }));
        put({ running: true });
        try {
            put({ running: false, result: await this.rpc.call("replay", { requestId }) });
        } catch (error) {
            put({ running: false, error: failure(error) });
        }
    }

    async loadDrills(): Promise<void> {
        const store = this.stores.isolation;
        try {
            const list = await this.rpc.call("listDrills", {});
            store.setState({ drills: { list } });
        } catch (error) {
            store.setState((state) => ({ drills: { list: state.drills.list, error: failure(error) } }));
        }
    }

    get drillRunning(): boolean {
        return Object.values(this.stores.isolation.getState().drillRuns).some((run) => run.running);
    }

    /**
     * Runs a fault drill (seconds: it starts sandboxed engines twice). One at a time: false, and
     * nothing sent, while another runs.
     */
    runDrill(id: string): boolean {
        if (this.drillRunning)
            return false;
        const store = this.stores.isolation;
        const put = (run: IsolationRun<DrillReport>): void =>
            store.setState((state) => ({ drillRuns: { ...state.drillRuns, [id]: run } }));
        put({ running: true });
        this.rpc.call("runDrill", { id }).then(
            (result) => put({ running: false, result }),
            (error: unknown) => put({ running: false, error: failure(error) })
        );
        return true;
    }

    /**
     * While the panel can be seen: the audit and the replayable turns now and every `intervalMs`,
     * again on every reconnect, the replayable turns again whenever a turn ends, and the drills
     * once. Returns the handle that refreshes now or stops it all.
     */
    watch(view: IsolationView, intervalMs = AUDIT_INTERVAL_MS): IsolationWatch {
        let stopped = false;
        const canSee = (): boolean => !stopped && this.rpc.status.kind === "open" && view.isOpen() && view.isVisible();
        const refresh = (): void => {
            if (!canSee())
                return;
            void this.audit();
            void this.refreshReplayable();
            if (this.stores.isolation.getState().drills.list === undefined)
                void this.loadDrills();
        };
        const timer = setInterval(refresh, intervalMs);
        const unsubscribeStatus = this.rpc.onStatus((status) => {
            if (status.kind === "open")
                refresh();
        });
        const unsubscribeTurns = this.stores.turns.subscribe((state, previous) => {
            const ended = Object.entries(previous.live).some(([workspace, turn]) => state.live[workspace]?.requestId !== turn.requestId);
            if (ended && canSee())
                void this.refreshReplayable();
        });
        refresh();
        return {
            refresh,
            stop: () => {
                stopped = true;
                clearInterval(timer);
                unsubscribeStatus();
                unsubscribeTurns();
            }
        };
    }
}

function failure(error: unknown): IsolationFailure {
    const { code, message } = toRpcError(error);
    return { code, message };
}
