import { describe, expect, it } from "vitest";
import { WorkspaceThroughput } from "../../../../engine/service/WorkspaceThroughput.js";

describe("WorkspaceThroughput", () => {
    it("counts each workspace's tokens apart, over the time since its first token in the window, fastest first", () => {
        let nowMs = 10_000;
        const meter = new WorkspaceThroughput(3, () => nowMs);
        for (let step = 0; step < 5; step++) {
            meter.add("alice", 10);
            meter.add("bob", 2);
            nowMs += 100;
        }
        // 50 tokens since 10,000 ms, read at 10,500 ms: 100 per second, while the answer runs.
        expect(meter.rates()).toEqual([
            { workspace: "alice", tokensPerSecond: 100 },
            { workspace: "bob", tokensPerSecond: 20 }
        ]);
    });

    it("fades an answer that ended over the window, then drops its workspace", () => {
        let nowMs = 0;
        const meter = new WorkspaceThroughput(3, () => nowMs);
        meter.add("alice", 30);
        nowMs = 1_000;
        expect(meter.rates()).toEqual([{ workspace: "alice", tokensPerSecond: 30 }]);
        nowMs = 2_999;
        expect(meter.rates()).toEqual([{ workspace: "alice", tokensPerSecond: 10 }]);
        nowMs = 3_000;
        expect(meter.rates()).toEqual([]);
    });

    it("never divides by less than one bucket: a first token alone is not a huge rate", () => {
        const meter = new WorkspaceThroughput(3, () => 5_050);
        meter.add("alice", 1);
        expect(meter.rates()).toEqual([{ workspace: "alice", tokensPerSecond: 10 }]);
    });
});
