import type { StoredMessage } from "../../contract/workspaces.js";
import { encodeJournalRecord, parseJournalLine } from "./journalRecords.js";

/** A line of a chat file that was set aside: 1-based, with its size in bytes (newline excluded). */
export interface JournalIssue {
    readonly line: number;
    readonly kind: "truncated" | "corrupt";
    readonly bytes: number;
    readonly reason: string;
}

export interface ReadJournal {
    readonly messages: readonly StoredMessage[];
    /** Lines set aside, in file order; the rest was loaded. */
    readonly issues: readonly JournalIssue[];
    /**
     * The file should be rewritten from `messages`: a line was set aside, the last line has no
     * newline (the next append would run into it), or drops, clears and empty lines left more
     * lines that hold no message than lines that do.
     */
    readonly needsRewrite: boolean;
}

const NEWLINE = 0x0a;
/** Below this many dead lines a file is not worth rewriting. */
const MIN_DEAD_LINES_TO_COMPACT = 16;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Replays a chat file. Each append writes one whole line ending in a newline, so a last line
 * without one is the record being written when Kvault stopped ("truncated"); any other line that
 * is not UTF-8, not JSON, or not a valid record is "corrupt". Either is skipped and reported,
 * never guessed at, and never stops the lines after it from loading.
 */
export function readJournal(bytes: Uint8Array): ReadJournal {
    let messages: StoredMessage[] = [];
    let ids = new Set<string>();
    const issues: JournalIssue[] = [];
    let numDeadLines = 0;
    let terminated = true;
    let lineNumber = 0;
    let start = 0;
    // Each pass consumes one line, so the loop runs at most once per byte.
    while (start < bytes.length) {
        lineNumber++;
        const newline = bytes.indexOf(NEWLINE, start);
        const complete = newline !== -1;
        const end = complete ? newline : bytes.length; // the line is [start, end)
        const line = bytes.subarray(start, end);
        start = end + 1;
        const kind = complete ? "corrupt" : "truncated";
        if (line.length === 0) {
            numDeadLines++;
            continue;
        }
        let text: string;
        try {
            text = utf8.decode(line);
        } catch {
            issues.push({ line: lineNumber, kind, bytes: line.length, reason: "not UTF-8 text" });
            continue;
        }
        const parsed = parseJournalLine(text);
        if (!parsed.ok) {
            issues.push({ line: lineNumber, kind, bytes: line.length, reason: parsed.reason });
            continue;
        }
        const record = parsed.value;
        if (!complete) {
            terminated = false;
        } // whole but unterminated: kept, and the file rewritten with its newline
        if (record.op === "message") {
            if (ids.has(record.message.id)) {
                issues.push({
                    line: lineNumber,
                    kind: "corrupt",
                    bytes: line.length,
                    reason: `message id ${record.message.id} is already in the chat`
                });
                continue;
            }
            messages.push(record.message);
            ids.add(record.message.id);
        } else if (record.op === "drop") {
            numDeadLines++;
            // A drop of anything but the last answer changes nothing: its message was set aside or never written.
            const last = messages.at(-1);
            if (last?.id === record.id && last.role === "assistant") {
                messages.pop();
                ids.delete(last.id);
                numDeadLines++;
            }
        } else {
            numDeadLines += 1 + messages.length;
            messages = [];
            ids = new Set();
        }
    }
    return {
        messages,
        issues,
        needsRewrite: issues.length > 0 || !terminated || numDeadLines > Math.max(MIN_DEAD_LINES_TO_COMPACT, messages.length)
    };
}

/** The chat as a clean file: one message record per line. */
export function encodeJournal(messages: readonly StoredMessage[]): string {
    return messages.map((message) => encodeJournalRecord({ op: "message", message })).join("");
}
