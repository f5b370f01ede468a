import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MemoryEvent } from "../../../../contract/memoryEvents.js";
import { MemoryEventLog } from "../../../../engine/audit/MemoryEventLog.js";
import { MemoryRecord, type MemoryRecordEngine } from "../../../../host/memoryRecord/MemoryRecord.js";

const BOUNDS = { maxFiles: 3, maxFileBytes: 4096 };

/** The engine's side as the record sees it: a real MemoryEventLog behind `memoryEvents`. */
function engineOver(log: MemoryEventLog, id?: string, primary = true): MemoryRecordEngine {
    return {
        id,
        primary,
        memoryEvents: (afterSeq) => Promise.resolve(log.after(afterSeq)),
        model: { name: id ?? "tiny", file: `/models/${id ?? "tiny"}.gguf` }
    };
}

function reserve(log: MemoryEventLog, count: number): void {
    for (let index = 0; index < count; index++) {
        log.record({
            kind: "reserved",
            workspace: "alice",
            requestId: `req-${index}`,
            pages: [index % 64],
            pageState: "reserved",
            generation: index,
            outcome: "ok"
        });
    }
}

describe("the audit record on disk", () => {
    const scratches: string[] = [];
    afterEach(() => {
        for (const scratch of scratches.splice(0)) {
            fs.rmSync(scratch, { recursive: true, force: true });
        }
    });
    const dataDirectory = (): string => {
        const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-record-"));
        scratches.push(scratch);
        return scratch;
    };

    it("rotates within maxFiles × maxFileBytes, keeping the newest events in order, each file 0600", async () => {
        const data = dataDirectory();
        const log = new MemoryEventLog();
        const record = new MemoryRecord({
            dataDirectory: data,
            kvaultVersion: "9.9.9",
            engines: () => Promise.resolve([engineOver(log)]),
            log: () => undefined,
            bounds: BOUNDS
        });
        for (let round = 0; round < 10; round++) {
            reserve(log, 40); // about 6 KiB a round: many rotations
            await record.poll();
            const files = record.files.files();
            expect(files.length).toBeLessThanOrEqual(BOUNDS.maxFiles);
            for (const file of files) {
                expect(file.numBytes).toBeLessThanOrEqual(BOUNDS.maxFileBytes);
                expect(fs.statSync(file.path).mode & 0o777).toBe(0o600);
            }
        }
        const seqs = record.files.readLines().map((line) => (JSON.parse(line) as MemoryEvent).seq);
        expect(seqs.at(-1)).toBe(400);
        expect(seqs).toEqual(seqs.map((_, index) => 400 - seqs.length + 1 + index));
        expect(seqs.length).toBeLessThan(400); // the oldest went with their file
        record.dispose();
    });

    it("survives a restart: a new record on the data directory goes on after the old lines, and a restarted engine's seq 1 is read again", async () => {
        const data = dataDirectory();
        const first = new MemoryEventLog();
        const before = new MemoryRecord({
            dataDirectory: data,
            kvaultVersion: "9.9.9",
            engines: () => Promise.resolve([engineOver(first)]),
            log: () => undefined,
            bounds: BOUNDS
        });
        reserve(first, 5);
        await before.poll();
        before.dispose();

        const second = new MemoryEventLog(); // the engine restarted: it counts from 1 again
        const after = new MemoryRecord({
            dataDirectory: data,
            kvaultVersion: "9.9.9",
            engines: () => Promise.resolve([engineOver(second)]),
            log: () => undefined,
            bounds: BOUNDS
        });
        reserve(second, 3);
        const exported = (await after.exportJsonl()).trimEnd().split("\n");
        expect(JSON.parse(exported[0]!)).toMatchObject({
            kind: "kvaultMemoryRecord",
            kvaultVersion: "9.9.9",
            model: { name: "tiny", file: "tiny.gguf" },
            numEvents: 8
        });
        expect(exported.slice(1).map((line) => (JSON.parse(line) as MemoryEvent).seq)).toEqual([1, 2, 3, 4, 5, 1, 2, 3]);
        after.dispose();
    });

    it("records every loaded model's events, a local model's under its id, forgets an unloaded one (loaded again, it counts from 1), and the export lists the models", async () => {
        const own = new MemoryEventLog();
        let pooled = new MemoryEventLog();
        let loaded = true;
        const record = new MemoryRecord({
            dataDirectory: dataDirectory(),
            kvaultVersion: "9.9.9",
            engines: () => Promise.resolve([engineOver(own, "tiny"), ...(loaded ? [engineOver(pooled, "small-local", false)] : [])]),
            log: () => undefined,
            bounds: BOUNDS
        });
        reserve(own, 2);
        reserve(pooled, 3);
        await record.poll();
        loaded = false; // unloaded when idle
        await record.poll();
        pooled = new MemoryEventLog(); // loaded again: a new engine
        loaded = true;
        reserve(pooled, 1);
        const exported = (await record.exportJsonl()).trimEnd().split("\n");
        const events = exported.slice(1).map((line) => JSON.parse(line) as MemoryEvent);
        expect(events.map((event) => `${event.model}#${event.seq}`)).toEqual([
            "undefined#1", // the host's own model's events stay unnamed, as in older records
            "undefined#2",
            "small-local#1",
            "small-local#2",
            "small-local#3",
            "small-local#1"
        ]);
        expect(JSON.parse(exported[0]!)).toMatchObject({
            model: { name: "tiny", file: "tiny.gguf" },
            models: [
                { id: "tiny", name: "tiny", file: "tiny.gguf", primary: true },
                { id: "small-local", name: "small-local", file: "small-local.gguf", primary: false }
            ],
            numEvents: 6
        });
        record.dispose();
    });

    it("the engine's ring drops its oldest past its capacity: the reader sees the gap by seq", () => {
        const log = new MemoryEventLog(4);
        reserve(log, 6);
        const page = log.after(0);
        expect(page).toMatchObject({ oldestSeq: 3, lastSeq: 6 });
        expect(page.events.map((event) => event.seq)).toEqual([3, 4, 5, 6]);
        expect(log.after(5).events.map((event) => event.seq)).toEqual([6]);
    });

    it("waits for an engine that never answers at most the given time before it closes, and appends nothing", async () => {
        const silent: MemoryRecordEngine = {
            id: undefined,
            primary: true,
            memoryEvents: () => new Promise(() => undefined),
            model: { name: "tiny", file: "/m.gguf" }
        };
        const record = new MemoryRecord({
            dataDirectory: dataDirectory(),
            kvaultVersion: "test",
            engines: () => Promise.resolve([silent]),
            log: () => undefined
        });
        const started = performance.now();
        await record.lastPoll(50);
        expect(performance.now() - started).toBeLessThan(5_000);
        record.dispose();
        expect(record.files.readLines()).toEqual([]);
    });
});
