import { ChatBranches, type BranchedChat } from "../../contract/chatBranches.js";
import { encodeJournalRecord, parseJournalLine } from "./journalRecords.js";

/** A line of a chat file that was set aside: 1-based, with its size in bytes (newline excluded). */
export interface JournalIssue {
    readonly line: number;
    readonly kind: "truncated" | "corrupt";
    readonly bytes: number;
    readonly reason: string;
}

export interface ReadJournal extends BranchedChat {
    /** Lines set aside, in file order; the rest was loaded. */
    readonly issues: readonly JournalIssue[];
    /**
     * The file should be rewritten from the chat: a line was set aside, the last line has no
     * newline (the next append would run into it), or drops, clears, selects and empty lines left
     * more lines that hold no message than lines that do.
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
 * never guessed at, and never stops the lines after it from loading. A message whose parent was
 * set aside follows the message before it, so it stays in the chat.
 */
export function readJournal(bytes: Uint8Array): ReadJournal {
    const chat = new ChatBranches();
    const issues: JournalIssue[] = [];
    let numLines = 0;
    let terminated = true;
    let lineNumber = 0;
    let start = 0;
    // Each pass consumes one line, so the loop runs at most once per byte.
    while (start < bytes.length) {
        lineNumber++;
        numLines++;
        const newline = bytes.indexOf(NEWLINE, start);
        const complete = newline !== -1;
        const end = complete ? newline : bytes.length; // the line is [start, end)
        const line = bytes.subarray(start, end);
        start = end + 1;
        const kind = complete ? "corrupt" : "truncated";
        if (line.length === 0) {
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
            if (chat.has(record.message.id)) {
                issues.push({
                    line: lineNumber,
                    kind: "corrupt",
                    bytes: line.length,
                    reason: `message id ${record.message.id} is already in the chat`
                });
                continue;
            }
            chat.append(record.message);
        } else if (record.op === "drop") {
            // Format 2's Regenerate: only ever the last answer. A drop of anything else changes nothing: its message was set aside or never written.
            const last = chat.toChat().messages.at(-1);
            if (last?.id === record.id && last.role === "assistant") {
                chat.delete(record.id);
            }
        } else if (record.op === "select") {
            chat.select(record.id);
        } else if (record.op === "delete") {
            chat.delete(record.id);
        } else {
            chat.clear();
        }
    }
    const numDeadLines = numLines - chat.size;
    return {
        ...chat.toChat(),
        issues,
        needsRewrite: issues.length > 0 || !terminated || numDeadLines > Math.max(MIN_DEAD_LINES_TO_COMPACT, chat.size)
    };
}

/**
 * The chat as a clean file: the path shown, then the other branches (each after its parent),
 * one message record per line, then a select of the path's end when branches followed it.
 */
export function encodeJournal(chat: BranchedChat): string {
    const lines = chat.messages.map((message) => encodeJournalRecord({ op: "message", message }));
    const written = new Set(chat.messages.map((message) => message.id));
    let pending = [...chat.branches];
    // Each pass writes at least one message whose parent is written (or is none), else the rest (a cycle, or a lost parent) as they are.
    while (pending.length > 0) {
        const ready = pending.filter((message) => message.parent === null || message.parent === undefined || written.has(message.parent));
        const next = ready.length > 0 ? ready : pending;
        for (const message of next) {
            lines.push(encodeJournalRecord({ op: "message", message }));
            written.add(message.id);
        }
        pending = pending.filter((message) => !written.has(message.id));
    }
    const leaf = chat.messages.at(-1);
    if (chat.branches.length > 0 && leaf !== undefined) {
        lines.push(encodeJournalRecord({ op: "select", id: leaf.id }));
    }
    return lines.join("");
}
