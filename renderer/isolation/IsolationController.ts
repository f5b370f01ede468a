import type { AuditFeed, DrillReport, ReplaySummary } from "../../contract/isolation.js";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { toRpcError } from "../rpc/RpcError.js";
import type { IsolationFailure, IsolationRun, IsolationStore } from "../stores/isolationStore.js";
import type { createTurnStore } from "../stores/turnStore.js";
import {
    targetModelParams,
    useIsolationModelsStore,
    type IsolationModelsStore,
    type ModelRow,
    type ModelRows
} from "./isolationModelsStore.js";

/** Between audits (and refreshes of the replayable turns) while the isolation panel is on screen. */
export const AUDIT_INTERVAL_MS = 5_000;

export interface IsolationControllerStores {
    readonly isolation: IsolationStore;
    /** Read only to notice a turn ending: it may have become replayable. */
    readonly turns: ReturnType<typeof createTurnStore>;
    /** The view's model choice and its runs over every loaded model; by default the page's own. */
    readonly models?: IsolationModelsStore;
}

/** A loaded model a run over every loaded model visits: its id, and whether it is the host's own (asked without `model`). */
export interface LoadedModelTarget {
    readonly id: string;
    readonly own: boolean;
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
    /** The engine audits on its own timer (its snapshots carry the results): the watch stops asking. */
    #engineAudits = false;
    /** The engine audit last taken from a snapshot, by its time and run count: each new one is an event. */
    #lastFeedAudit: string | undefined;

    constructor(
        private readonly rpc: KvaultRpc,
        private readonly stores: IsolationControllerStores,
        private readonly now: () => number = Date.now
    ) {}

    get #models(): IsolationModelsStore {
        return this.stores.models ?? useIsolationModelsStore;
    }

    /** The chosen model's params for a single run; a view set to every loaded model audits the host's own on its timer. */
    #params(): { readonly model?: string } {
        return targetModelParams(this.#models.getState().target);
    }

    /** Runs the audit on the chosen model unless one is in flight. */
    async audit(): Promise<void> {
        const store = this.stores.isolation;
        if (store.getState().audit.running) {
            return;
        }
        store.setState((state) => ({ audit: { ...state.audit, running: true } }));
        try {
            const summary = await this.rpc.call("audit", this.#params());
            store.setState({ audit: { running: false, summary, checkedAt: this.now() } });
        } catch (error) {
            // No old "ok" left on screen beside a failure: the audit's verdict is now unknown.
            store.setState({ audit: { running: false, error: failure(error), checkedAt: this.now() } });
        }
    }

    /**
     * Takes the engine's own audits from a snapshot (the snapshot's `audit`): a new one replaces
     * the verdict on screen as an on-demand audit's answer would. Called with every snapshot.
     */
    adoptAuditFeed(feed: AuditFeed | undefined): void {
        const store = this.stores.isolation;
        this.#engineAudits = feed !== undefined;
        if (feed === undefined) {
            if (store.getState().auditFeed !== undefined) {
                store.setState({ auditFeed: undefined });
            }
            return;
        }
        const { intervalMs, numRuns, numRunsWithViolations, lastWithViolations } = feed;
        const previous = store.getState().auditFeed;
        if (
            previous?.numRuns !== numRuns ||
            previous.intervalMs !== intervalMs ||
            previous.lastWithViolations?.at !== lastWithViolations?.at
        ) {
            store.setState({
                auditFeed: {
                    intervalMs,
                    numRuns,
                    numRunsWithViolations,
                    ...(lastWithViolations === undefined ? {} : { lastWithViolations })
                }
            });
        }
        const latest = feed.latest;
        const key = latest === undefined ? undefined : `${latest.at}/${numRuns}`;
        if (latest === undefined || key === this.#lastFeedAudit) {
            return;
        }
        this.#lastFeedAudit = key;
        store.setState((state) => ({ audit: { running: state.audit.running, summary: latest, checkedAt: this.now() } }));
    }

    /**
     * Runs the canary probe on the loaded model (tens of seconds). One at a time: false, and
     * nothing sent, while one runs (the engine refuses a second with canary_running too).
     */
    runCanary(): boolean {
        const store = this.stores.isolation;
        if (store.getState().canary.running || this.#models.getState().canary?.running === true) {
            return false;
        }
        store.setState({ canary: { running: true } });
        this.rpc.call("runCanary", this.#params()).then(
            (result) => store.setState({ canary: { running: false, result } }),
            (error: unknown) => store.setState({ canary: { running: false, error: failure(error) } })
        );
        return true;
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
        if (store.getState().replays[requestId]?.running === true) {
            return;
        }
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
        if (this.drillRunning || this.drillEveryRunning) {
            return false;
        }
        const store = this.stores.isolation;
        const put = (run: IsolationRun<DrillReport>): void => store.setState((state) => ({ drillRuns: { ...state.drillRuns, [id]: run } }));
        put({ running: true });
        this.rpc.call("runDrill", { id, ...this.#params() }).then(
            (result) => put({ running: false, result }),
            (error: unknown) => put({ running: false, error: failure(error) })
        );
        return true;
    }

    /** The audit on every loaded model, one after another, a row per model; false, and nothing sent, while one such run goes on. */
    auditEvery(models: readonly LoadedModelTarget[]): boolean {
        const store = this.#models;
        if (store.getState().audit?.running === true) {
            return false;
        }
        void this.#runOnEvery(
            models,
            (params) => this.rpc.call("audit", params),
            (rows) => store.setState({ audit: rows })
        );
        return true;
    }

    /** The canary probe on every loaded model, one after another; false, and nothing sent, while a canary runs. */
    runCanaryEvery(models: readonly LoadedModelTarget[]): boolean {
        const store = this.#models;
        if (store.getState().canary?.running === true || this.stores.isolation.getState().canary.running) {
            return false;
        }
        void this.#runOnEvery(
            models,
            (params) => this.rpc.call("runCanary", params),
            (rows) => store.setState({ canary: rows })
        );
        return true;
    }

    get drillEveryRunning(): boolean {
        return Object.values(this.#models.getState().drills).some((run) => run.running);
    }

    /** The drill `id` on every loaded model's engine settings, one after another; false, and nothing sent, while a drill runs. */
    runDrillEvery(id: string, models: readonly LoadedModelTarget[]): boolean {
        if (this.drillRunning || this.drillEveryRunning) {
            return false;
        }
        const store = this.#models;
        void this.#runOnEvery(
            models,
            (params) => this.rpc.call("runDrill", { id, ...params }),
            (rows) => store.setState((state) => ({ drills: { ...state.drills, [id]: rows } }))
        );
        return true;
    }

    /** Runs `call` on each model in turn (a drill or a canary loads the machine: never two at once), putting every row as it changes. */
    async #runOnEvery<T>(
        models: readonly LoadedModelTarget[],
        call: (params: { readonly model?: string }) => Promise<T>,
        put: (rows: ModelRows<T>) => void
    ): Promise<void> {
        let rows: ModelRow<T>[] = models.map((model) => ({ model: model.id, running: false }));
        const update = (index: number, row: ModelRow<T>, running: boolean): void => {
            rows = rows.map((kept, at) => (at === index ? row : kept));
            put({ running, rows });
        };
        put({ running: true, rows });
        for (const [index, model] of models.entries()) {
            update(index, { model: model.id, running: true }, true);
            try {
                const result = await call(model.own ? {} : { model: model.id });
                update(index, { model: model.id, running: false, result }, index < models.length - 1);
            } catch (error) {
                update(index, { model: model.id, running: false, error: failure(error) }, index < models.length - 1);
            }
        }
        if (models.length === 0) {
            put({ running: false, rows });
        }
    }

    /**
     * While the panel can be seen: the audit (unless the engine audits on its own timer, see
     * `adoptAuditFeed`) and the replayable turns now and every `intervalMs`,
     * again on every reconnect, the replayable turns again whenever a turn ends, and the drills
     * once. Returns the handle that refreshes now or stops it all.
     */
    watch(view: IsolationView, intervalMs = AUDIT_INTERVAL_MS): IsolationWatch {
        let stopped = false;
        const canSee = (): boolean => !stopped && this.rpc.status.kind === "open" && view.isOpen() && view.isVisible();
        const refresh = (): void => {
            if (!canSee()) {
                return;
            }
            if (!this.#engineAudits) {
                void this.audit();
            }
            void this.refreshReplayable();
            if (this.stores.isolation.getState().drills.list === undefined) {
                void this.loadDrills();
            }
        };
        const timer = setInterval(refresh, intervalMs);
        const unsubscribeStatus = this.rpc.onStatus((status) => {
            if (status.kind === "open") {
                refresh();
            }
        });
        const unsubscribeTurns = this.stores.turns.subscribe((state, previous) => {
            const ended = Object.entries(previous.live).some(([workspace, turn]) => state.live[workspace]?.requestId !== turn.requestId);
            if (ended && canSee()) {
                void this.refreshReplayable();
            }
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
