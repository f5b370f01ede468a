import { setTimeout as sleep } from "node:timers/promises";
import { LANE_POLL_MS, LaneLock, LaneWaitTimeoutError, MAX_LANE_WAIT_MS } from "./LaneLock.js";
import { testLanes } from "./testLanes.js";

/**
 * Takes the lanes a heavy file runs in and returns them held. A file that needs the whole machine
 * waits for every lane, taken in {@link testLanes}' order so two such files never hold one each and
 * wait on each other; any other file takes whichever lane frees first, never holding one while it
 * waits for another. A lane whose holder died is taken over (LaneLock.tryAcquire).
 */
export async function takeTestLanes(runId: string, wholeMachine: boolean): Promise<readonly LaneLock[]> {
    const locks = testLanes.map((lane) => new LaneLock(lane, runId));
    if (wholeMachine) {
        for (const lock of locks) {
            await lock.acquire();
        }
        return locks;
    }
    const started = Date.now();
    while (Date.now() - started < MAX_LANE_WAIT_MS) {
        const free = locks.find((lock) => lock.tryAcquire());
        if (free !== undefined) {
            return [free];
        }
        await sleep(LANE_POLL_MS);
    }
    throw new LaneWaitTimeoutError(locks, Date.now() - started);
}
