import { afterEach, describe, expect, it, vi } from "vitest";
import type {
    AuditFeed,
    AuditSummary,
    CanaryReport,
    DrillDescription,
    DrillReport,
    ReplayableTurn
} from "../../../../contract/isolation.js";
import { AUDIT_INTERVAL_MS, IsolationController } from "../../../../renderer/isolation/IsolationController.js";
import { RpcError } from "../../../../renderer/rpc/RpcError.js";
import { createIsolationStore } from "../../../../renderer/stores/isolationStore.js";
import { createTurnStore } from "../../../../renderer/stores/turnStore.js";
import { FakeRpc, settle } from "../FakeRpc.js";

const audit: AuditSummary = {
    ok: true,
    violations: [],
    numViolations: 0,
    numPagesChecked: 96,
    numSealedPagesVerified: 0,
    numFreePagesScanned: 96,
    durationMs: 0.3,
    at: 1
};
const drills: DrillDescription[] = [
    { id: "flipped-byte", title: "A byte flips", failureModes: ["flipped-byte"], guard: "checksums" },
    {
        id: "late-write",
        title: "A late write",
        failureModes: ["late-write-after-cancel", "reuse-under-reader", "replayed-completion"],
        guard: "quarantine"
    }
];
const report: DrillReport = {
    ...drills[0]!,
    guardFired: true,
    guardError: { code: "handoff_checksum_mismatch", message: "mismatch" },
    victimClean: true,
    leakObservedWithGuardOff: true,
    leakEvidence: "a changed byte reached decode",
    durationMs: 9_000
};

function setup(): {
    rpc: FakeRpc;
    controller: IsolationController;
    isolation: ReturnType<typeof createIsolationStore>;
    turns: ReturnType<typeof createTurnStore>;
} {
    const rpc = new FakeRpc();
    const isolation = createIsolationStore();
    const turns = createTurnStore();
    let clock = 1_000;
    const controller = new IsolationController(rpc, { isolation, turns }, () => clock++);
    return { rpc, controller, isolation, turns };
}

/** A promise the test settles by hand. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(error: Error): void } {
    let resolve!: (value: T) => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
    });
    return { promise, resolve, reject };
}

const methods = (rpc: FakeRpc): string[] => rpc.calls.map((call) => call.method);

afterEach(() => {
    vi.useRealTimers();
});

describe("IsolationController", () => {
    it("keeps the audit's answer with when it came, and a failure with its code instead of an old verdict", async () => {
        const { rpc, controller, isolation } = setup();
        rpc.answers.audit = () => audit;
        await controller.audit();
        expect(isolation.getState().audit).toEqual({ running: false, summary: audit, checkedAt: 1_000 });
        rpc.answers.audit = () => {
            throw new RpcError("engine_timeout", "The engine did not answer an audit call within 30 s.");
        };
        await controller.audit();
        expect(isolation.getState().audit).toEqual({
            running: false,
            error: { code: "engine_timeout", message: "The engine did not answer an audit call within 30 s." },
            checkedAt: 1_001
        });
    });

    it("runs one audit at a time: a click while one is in flight sends nothing more", async () => {
        const { rpc, controller, isolation } = setup();
        const answer = deferred<AuditSummary>();
        rpc.answers.audit = () => answer.promise as never;
        const first = controller.audit();
        expect(isolation.getState().audit.running).toBe(true);
        await controller.audit();
        expect(methods(rpc)).toEqual(["audit"]);
        answer.resolve(audit);
        await first;
        expect(isolation.getState().audit).toMatchObject({ running: false, summary: audit });
    });

    it("replays a turn by its requestId and keeps the verdict per turn; replay_unavailable is kept with its code", async () => {
        const { rpc, controller, isolation } = setup();
        rpc.answers.replay = ({ requestId }) => {
            if (requestId !== "turn-1") {
                throw new RpcError("replay_unavailable", `Turn ${requestId} cannot be replayed.`);
            }
            return { requestId, numTokens: 5, identical: true, durationMs: 20 };
        };
        await Promise.all([controller.replay("turn-1"), controller.replay("turn-2")]);
        expect(isolation.getState().replays).toEqual({
            "turn-1": { running: false, result: { requestId: "turn-1", numTokens: 5, identical: true, durationMs: 20 } },
            "turn-2": { running: false, error: { code: "replay_unavailable", message: "Turn turn-2 cannot be replayed." } }
        });
        expect(rpc.calls).toEqual([
            { method: "replay", params: { requestId: "turn-1" } },
            { method: "replay", params: { requestId: "turn-2" } }
        ]);
    });

    it("runs one drill at a time and keeps each drill's last report", async () => {
        const { rpc, controller, isolation } = setup();
        const answer = deferred<DrillReport>();
        rpc.answers.runDrill = () => answer.promise as never;
        expect(controller.runDrill("flipped-byte")).toBe(true);
        expect(controller.drillRunning).toBe(true);
        expect(controller.runDrill("late-write")).toBe(false);
        expect(isolation.getState().drillRuns).toEqual({ "flipped-byte": { running: true } });
        answer.resolve(report);
        await settle();
        expect(isolation.getState().drillRuns).toEqual({ "flipped-byte": { running: false, result: report } });
        rpc.answers.runDrill = ({ id }) => {
            throw new RpcError("unknown_drill", `There is no drill "${id}".`);
        };
        expect(controller.runDrill("late-write")).toBe(true);
        await settle();
        expect(isolation.getState().drillRuns["late-write"]).toEqual({
            running: false,
            error: { code: "unknown_drill", message: 'There is no drill "late-write".' }
        });
        expect(rpc.calls.filter((call) => call.method === "runDrill").map((call) => call.params)).toEqual([
            { id: "flipped-byte" },
            { id: "late-write" }
        ]);
    });

    it("keeps the last list of turns and drills when a refresh fails, beside the failure", async () => {
        const { rpc, controller, isolation } = setup();
        const turns: ReplayableTurn[] = [{ requestId: "turn-1", workspace: "w", numTokens: 3 }];
        rpc.answers.replayableTurns = () => turns;
        rpc.answers.listDrills = () => drills;
        await Promise.all([controller.refreshReplayable(), controller.loadDrills()]);
        rpc.setStatus({ kind: "reconnecting", attempt: 1 });
        await Promise.all([controller.refreshReplayable(), controller.loadDrills()]);
        expect(isolation.getState().replayable).toEqual({ turns, error: { code: "not_connected", message: "Not connected." } });
        expect(isolation.getState().drills).toEqual({ list: drills, error: { code: "not_connected", message: "Not connected." } });
    });
});

describe("IsolationController.watch", () => {
    function answerAll(rpc: FakeRpc): void {
        rpc.answers.audit = () => audit;
        rpc.answers.replayableTurns = () => [];
        rpc.answers.listDrills = () => drills;
    }

    it("audits and refreshes the turns at once and every interval while the panel is open and visible, and loads the drills once", async () => {
        vi.useFakeTimers();
        const { rpc, controller } = setup();
        answerAll(rpc);
        let open = true;
        const watch = controller.watch({ isOpen: () => open, isVisible: () => true });
        await vi.advanceTimersByTimeAsync(0);
        expect(methods(rpc)).toEqual(["audit", "replayableTurns", "listDrills"]);
        await vi.advanceTimersByTimeAsync(AUDIT_INTERVAL_MS);
        expect(methods(rpc)).toEqual(["audit", "replayableTurns", "listDrills", "audit", "replayableTurns"]);
        open = false;
        await vi.advanceTimersByTimeAsync(AUDIT_INTERVAL_MS * 3);
        expect(rpc.calls).toHaveLength(5);
        open = true;
        watch.refresh(); // the panel was opened again
        expect(rpc.calls).toHaveLength(7);
        watch.stop();
        await vi.advanceTimersByTimeAsync(AUDIT_INTERVAL_MS * 3);
        watch.refresh();
        expect(rpc.calls).toHaveLength(7);
    });

    it("sends nothing while the page is hidden or the connection is down, and catches up on reconnect", async () => {
        vi.useFakeTimers();
        const { rpc, controller } = setup();
        answerAll(rpc);
        let visible = false;
        const watch = controller.watch({ isOpen: () => true, isVisible: () => visible });
        await vi.advanceTimersByTimeAsync(AUDIT_INTERVAL_MS * 2);
        expect(rpc.calls).toEqual([]);
        visible = true;
        rpc.setStatus({ kind: "reconnecting", attempt: 1 });
        await vi.advanceTimersByTimeAsync(AUDIT_INTERVAL_MS);
        expect(rpc.calls).toEqual([]);
        rpc.setStatus({ kind: "open" });
        expect(methods(rpc)).toEqual(["audit", "replayableTurns", "listDrills"]);
        watch.stop();
    });

    it("refreshes the replayable turns when a turn ends, so a finished turn can be replayed at once", async () => {
        vi.useFakeTimers();
        const { rpc, controller, isolation, turns } = setup();
        answerAll(rpc);
        const watch = controller.watch({ isOpen: () => true, isVisible: () => true });
        await vi.advanceTimersByTimeAsync(0);
        rpc.calls.length = 0;
        turns.getState().begin("w", "turn-9");
        turns.getState().started("w", "turn-9");
        expect(rpc.calls).toEqual([]);
        rpc.answers.replayableTurns = () => [{ requestId: "turn-9", workspace: "w", numTokens: 4 }];
        turns.getState().end("w", "turn-9");
        await vi.advanceTimersByTimeAsync(0);
        expect(methods(rpc)).toEqual(["replayableTurns"]);
        expect(isolation.getState().replayable.turns).toEqual([{ requestId: "turn-9", workspace: "w", numTokens: 4 }]);
        watch.stop();
    });
});

describe("IsolationController: the engine's own audits and the canary", () => {
    const feed = (numRuns: number, latest: AuditSummary): AuditFeed => ({ intervalMs: 1_000, numRuns, numRunsWithViolations: 0, latest });

    it("takes each new audit from the snapshots as an event, and stops asking for audits while the engine runs its own", async () => {
        vi.useFakeTimers();
        const { rpc, controller, isolation } = setup();
        rpc.answers.audit = () => audit;
        rpc.answers.replayableTurns = () => [];
        rpc.answers.listDrills = () => drills;
        const watch = controller.watch({ isOpen: () => true, isVisible: () => true });
        await vi.advanceTimersByTimeAsync(0);
        expect(methods(rpc)).toEqual(["audit", "replayableTurns", "listDrills"]);

        controller.adoptAuditFeed(feed(7, { ...audit, at: 7_000 }));
        expect(isolation.getState().audit).toEqual({ running: false, summary: { ...audit, at: 7_000 }, checkedAt: expect.any(Number) });
        expect(isolation.getState().auditFeed).toEqual({ intervalMs: 1_000, numRuns: 7, numRunsWithViolations: 0 });
        const checkedAt = isolation.getState().audit.checkedAt;
        controller.adoptAuditFeed(feed(7, { ...audit, at: 7_000 })); // the same audit in the next snapshot: no new event
        expect(isolation.getState().audit.checkedAt).toBe(checkedAt);

        rpc.calls.length = 0;
        await vi.advanceTimersByTimeAsync(AUDIT_INTERVAL_MS);
        expect(methods(rpc)).toEqual(["replayableTurns"]); // the engine audits itself: the panel only refreshes the turns

        const dirty: AuditSummary = {
            ...audit,
            ok: false,
            numViolations: 1,
            violations: [{ invariant: "I6", message: "free page 3 is not all zero" }],
            at: 8_000
        };
        controller.adoptAuditFeed({ ...feed(8, { ...audit, at: 9_000 }), numRunsWithViolations: 1, lastWithViolations: dirty });
        expect(isolation.getState().audit.summary?.at).toBe(9_000);
        expect(isolation.getState().auditFeed).toEqual({
            intervalMs: 1_000,
            numRuns: 8,
            numRunsWithViolations: 1,
            lastWithViolations: dirty
        });

        controller.adoptAuditFeed(undefined); // an engine that audits only when asked (restarted in a test's process, say)
        expect(isolation.getState().auditFeed).toBeUndefined();
        rpc.calls.length = 0;
        await vi.advanceTimersByTimeAsync(AUDIT_INTERVAL_MS);
        expect(methods(rpc)).toEqual(["audit", "replayableTurns"]);
        watch.stop();
    });

    it("runs one canary at a time and keeps its report, or its failure with the engine's code", async () => {
        const { rpc, controller, isolation } = setup();
        const answer = deferred<CanaryReport>();
        rpc.answers.runCanary = () => answer.promise as never;
        expect(controller.runCanary()).toBe(true);
        expect(controller.runCanary()).toBe(false);
        expect(isolation.getState().canary).toEqual({ running: true });
        const canary = { passed: true, probes: [] } as unknown as CanaryReport;
        answer.resolve(canary);
        await settle();
        expect(isolation.getState().canary).toEqual({ running: false, result: canary });
        rpc.answers.runCanary = () => {
            throw new RpcError("canary_running", "A canary probe is already running on this engine.");
        };
        expect(controller.runCanary()).toBe(true);
        await settle();
        expect(isolation.getState().canary).toEqual({
            running: false,
            error: { code: "canary_running", message: "A canary probe is already running on this engine." }
        });
        expect(rpc.calls.filter((call) => call.method === "runCanary").map((call) => call.params)).toEqual([{}, {}]);
    });
});
