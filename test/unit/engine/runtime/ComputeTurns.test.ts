import { describe, expect, it } from "vitest";
import { ComputeTurns } from "../../../../engine/runtime/ComputeTurns.js";

/** A computation that runs until `finish` is called, recording when it starts. */
function controlled(log: string[], name: string): { compute: () => Promise<string>; finish: () => void } {
    let finish = (): void => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    return {
        compute: async () => {
            log.push(`start ${name}`);
            await done;
            log.push(`end ${name}`);
            return name;
        },
        finish: () => finish()
    };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("ComputeTurns", () => {
    it("runs one computation at a time, in the order asked, the next only once the last has ended", async () => {
        const turns = new ComputeTurns();
        const log: string[] = [];
        const prefill = controlled(log, "prefill chunk");
        const decode = controlled(log, "decode step");
        const next = controlled(log, "next chunk");
        const results = [turns.run(prefill.compute), turns.run(decode.compute), turns.run(next.compute)];
        await settle();
        expect(log).toEqual(["start prefill chunk"]);
        prefill.finish();
        await settle();
        expect(log).toEqual(["start prefill chunk", "end prefill chunk", "start decode step"]);
        decode.finish();
        next.finish();
        expect(await Promise.all(results)).toEqual(["prefill chunk", "decode step", "next chunk"]);
        expect(log).toEqual([
            "start prefill chunk",
            "end prefill chunk",
            "start decode step",
            "end decode step",
            "start next chunk",
            "end next chunk"
        ]);
        expect({ turns: turns.numTurns, waited: turns.numWaited }).toEqual({ turns: 3, waited: 2 });
    });

    it("starts a computation at once on a free machine, in the same step", () => {
        const turns = new ComputeTurns();
        let started = false;
        void turns.run(async () => {
            started = true;
        });
        expect(started).toBe(true);
        expect(turns.numWaited).toBe(0);
    });

    it("passes the turn on after a computation that failed, and the failure reaches only its caller", async () => {
        const turns = new ComputeTurns();
        const failed = turns.run(() => Promise.reject(new Error("decode failed: -1")));
        const after = turns.run(async () => "after");
        await expect(failed).rejects.toThrow("decode failed: -1");
        await expect(after).resolves.toBe("after");
        // and the machine is free again: the next starts at once
        let started = false;
        void turns.run(async () => {
            started = true;
        });
        expect(started).toBe(true);
    });

    it("lets no later arrival overtake the queue while the turn passes on", async () => {
        const turns = new ComputeTurns();
        const log: string[] = [];
        const first = controlled(log, "a");
        const second = controlled(log, "b");
        void turns.run(first.compute);
        void turns.run(second.compute);
        await settle();
        first.finish();
        // asked in the very step the first one ends: it must queue behind "b"
        const late = controlled(log, "late");
        void turns.run(late.compute);
        await settle();
        expect(log).toEqual(["start a", "end a", "start b"]);
        second.finish();
        late.finish();
        await settle();
        await settle();
        expect(log.slice(-2)).toEqual(["start late", "end late"]);
    });
});
