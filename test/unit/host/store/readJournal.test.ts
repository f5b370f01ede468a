import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StoredMessage } from "../../../../contract/workspaces.js";
import { encodeJournalRecord, parseJournalLine, type JournalRecord } from "../../../../host/store/journalRecords.js";
import { encodeJournal, readJournal } from "../../../../host/store/readJournal.js";

const usage = { promptTokens: 12, cachedPromptTokens: 4, evaluatedPromptTokens: 8, completionTokens: 3 };
const hi: StoredMessage = { id: "m-1", role: "user", content: "Hi\nthere \u2028 “quoted” 🙂" };
const hello: StoredMessage = { id: "m-2", role: "assistant", content: "Hello.", finish: "stop", usage };
const again: StoredMessage = { id: "m-3", role: "user", content: "Again" };

const bytesOf = (...lines: string[]): Buffer => Buffer.from(lines.join(""), "utf8");
const line = (record: JournalRecord): string => encodeJournalRecord(record);
const message = (item: StoredMessage): string => line({ op: "message", message: item });

describe("a chat file's records", () => {
    it("are one self-describing JSON line each, with the format version, newlines inside strings escaped", () => {
        const text = message(hi);
        expect(text.endsWith("\n")).toBe(true);
        expect(text.slice(0, -1)).not.toContain("\n");
        expect(JSON.parse(text)).toEqual({ v: 3, op: "message", ...hi });
        expect(line({ op: "drop", id: "m-2" })).toBe('{"v":3,"op":"drop","id":"m-2"}\n');
        expect(line({ op: "clear" })).toBe('{"v":3,"op":"clear"}\n');
        expect(line({ op: "select", id: "m-2" })).toBe('{"v":3,"op":"select","id":"m-2"}\n');
        expect(line({ op: "delete", id: "m-2" })).toBe('{"v":3,"op":"delete","id":"m-2"}\n');
    });

    it.each([
        ["not JSON", '{"v":2,"op":"mess', /not JSON/],
        ["an array", "[1,2]", /not a JSON object/],
        ["a newer format", '{"v":4,"op":"clear"}', /format 4, not 2 to 3/],
        ["an older format", '{"v":1,"op":"clear"}', /format 1, not 2 to 3/],
        ["a select in format 2", '{"v":2,"op":"select","id":"m-1"}', /not one of format 2/],
        ["an unknown op", '{"v":2,"op":"rewrite"}', /op "rewrite"/],
        ["a system message", '{"v":2,"op":"message","id":"m-1","role":"system","content":"x"}', /role "system"/],
        ["content of the wrong type", '{"v":2,"op":"message","id":"m-1","role":"user","content":42}', /content is 42/],
        ["an id that could name a path", '{"v":2,"op":"message","id":"../x","role":"user","content":"x"}', /id "..\/x" is not a store id/],
        ["a bad finish", '{"v":2,"op":"message","id":"m-1","role":"assistant","content":"x","finish":"crashed"}', /finish "crashed"/],
        [
            "a bad usage count",
            '{"v":2,"op":"message","id":"m-1","role":"assistant","content":"x","usage":{"promptTokens":-1}}',
            /usage.promptTokens -1/
        ],
        ["a drop without an id", '{"v":2,"op":"drop"}', /drop names id missing/]
    ])("refuse %s, saying why", (_, text, reason) => {
        const parsed = parseJournalLine(text);
        expect(parsed.ok).toBe(false);
        expect(!parsed.ok && parsed.reason).toMatch(reason);
    });
});

describe("readJournal", () => {
    it("replays messages, a dropped answer (Regenerate) and a clear, in order", () => {
        const read = readJournal(
            bytesOf(
                message(hi),
                message(hello),
                line({ op: "drop", id: "m-2" }),
                message({ ...hello, id: "m-4" }),
                line({ op: "clear" }),
                message(again)
            )
        );
        expect(read.messages).toEqual([again]);
        expect(read.issues).toEqual([]);
    });

    it("reads back exactly what encodeJournal wrote, and asks for no rewrite", () => {
        const read = readJournal(Buffer.from(encodeJournal({ messages: [hi, hello, again], branches: [] })));
        expect(read).toEqual({ messages: [hi, hello, again], branches: [], issues: [], needsRewrite: false });
    });

    it("ignores a drop that does not name the last answer (its message was never written or was set aside)", () => {
        expect(readJournal(bytesOf(message(hi), line({ op: "drop", id: "m-1" }), line({ op: "drop", id: "m-9" }))).messages).toEqual([hi]);
    });

    it("sets aside a last line cut short as truncated, and loads every line before it", () => {
        const whole = message(again);
        const bytes = bytesOf(message(hi), message(hello), whole.slice(0, 20));
        const read = readJournal(bytes);
        expect(read.messages).toEqual([hi, hello]);
        expect(read.issues).toEqual([{ line: 3, kind: "truncated", bytes: 20, reason: "not JSON" }]);
        expect(read.needsRewrite).toBe(true);
    });

    it("keeps a whole last record whose newline was not written, and asks for a rewrite so the next append cannot run into it", () => {
        const read = readJournal(bytesOf(message(hi), message(hello).slice(0, -1)));
        expect(read.messages).toEqual([hi, hello]);
        expect(read.issues).toEqual([]);
        expect(read.needsRewrite).toBe(true);
    });

    it("skips corrupt lines in the middle (bad JSON, bad fields, wrong types, bad UTF-8, repeated ids) and loads the rest", () => {
        const garbage = Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]); // "{", two bytes that are never UTF-8, "}", newline
        const bytes = Buffer.concat([
            bytesOf(
                message(hi),
                '{"v":2,"op":"message","id":"m-x","role":"user","content":\n',
                '{"v":2,"op":"message","id":"m-y","role":"robot","content":"x"}\n'
            ),
            garbage,
            bytesOf(message(hi), message(hello), "\n", message(again))
        ]);
        const read = readJournal(bytes);
        expect(read.messages).toEqual([hi, hello, again]);
        expect(read.issues.map(({ line: at, kind, reason }) => [at, kind, reason])).toEqual([
            [2, "corrupt", "not JSON"],
            [3, "corrupt", 'role "robot" is not "user" or "assistant"'],
            [4, "corrupt", "not UTF-8 text"],
            [5, "corrupt", "message id m-1 is already in the chat"]
        ]);
        expect(read.issues[2]!.bytes).toBe(4);
        expect(read.needsRewrite).toBe(true);
    });

    it("asks for a rewrite once drops and clears leave more dead lines than live ones", () => {
        const regenerated = Array.from(
            { length: 20 },
            (_, index) => message({ ...hello, id: `m-a${index}` }) + line({ op: "drop", id: `m-a${index}` })
        );
        expect(readJournal(bytesOf(message(hi), ...regenerated.slice(0, 4))).needsRewrite).toBe(false);
        expect(readJournal(bytesOf(message(hi), ...regenerated)).needsRewrite).toBe(true);
    });

    it("whatever byte a crash cuts the file at, loads a prefix of the chat and sets aside at most the one cut record", () => {
        const messages: StoredMessage[] = [
            hi,
            hello,
            again,
            { id: "m-5", role: "assistant", content: "ü".repeat(300), finish: "length", usage }
        ];
        const file = Buffer.from(encodeJournal({ messages, branches: [] }));
        const lineEnds = [...file.entries()].filter(([, byte]) => byte === 0x0a).map(([index]) => index + 1);
        fc.assert(
            fc.property(fc.integer({ min: 0, max: file.length }), (cut) => {
                const read = readJournal(file.subarray(0, cut));
                const numWhole = lineEnds.filter((end) => end <= cut).length;
                const cutInsideRecord = cut > (lineEnds[numWhole - 1] ?? 0);
                // A record is whole without its newline only when the cut falls right before it.
                const numLoaded = numWhole + (cutInsideRecord && lineEnds.includes(cut + 1) ? 1 : 0);
                expect(read.messages).toEqual(messages.slice(0, numLoaded));
                expect(read.issues.length).toBe(cutInsideRecord && numLoaded === numWhole ? 1 : 0);
                for (const issue of read.issues) {
                    expect(issue).toMatchObject({ line: numWhole + 1, kind: "truncated", bytes: cut - (lineEnds[numWhole - 1] ?? 0) });
                }
            }),
            { numRuns: 300 }
        );
    });

    it("whatever one line in the middle is overwritten with, loses only that line", () => {
        const messages = Array.from(
            { length: 6 },
            (_, index): StoredMessage => ({ id: `m-${index}`, role: index % 2 === 0 ? "user" : "assistant", content: `message ${index}` })
        );
        fc.assert(
            fc.property(fc.integer({ min: 0, max: 4 }), fc.uint8Array({ minLength: 1, maxLength: 80 }), (index, noise) => {
                const lines = messages.map((item) => Buffer.from(message(item)));
                const damaged = Buffer.from([...noise].map((byte) => (byte === 0x0a ? 0x20 : byte)));
                lines[index] = Buffer.concat([damaged, Buffer.from("\n")]);
                const read = readJournal(Buffer.concat(lines));
                expect(read.messages).toEqual(messages.filter((_, at) => at !== index));
                expect(read.issues).toEqual([expect.objectContaining({ line: index + 1, kind: "corrupt", bytes: damaged.length })]);
            }),
            { numRuns: 200 }
        );
    });
});
