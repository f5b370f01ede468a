import type { Workspace } from "./Workspace.js";

/** One place a search found its text: a workspace's name, or one of its messages (on the branch shown, or another). */
export interface SearchHit {
    readonly workspaceId: string;
    readonly workspaceName: string;
    /** Absent when the name matched. */
    readonly messageId?: string;
    readonly role?: "user" | "assistant";
    /** Whether the message is on another branch than the one shown. */
    readonly otherBranch?: boolean;
    /** The text around the match (SNIPPET_BEFORE characters before it, SNIPPET_AFTER after), with the match at `matchStart`. */
    readonly snippet: string;
    readonly matchStart: number;
    readonly matchLength: number;
}

const SNIPPET_BEFORE = 30;
const SNIPPET_AFTER = 50;

/**
 * Every workspace whose name, and every message whose text, holds `query` (case- and
 * accent-insensitive, ignoring spaces around it); names first, then messages in chat order.
 * At most `limit` hits: a search of a common word stops there instead of listing thousands.
 */
export function searchWorkspaces(workspaces: readonly Workspace[], query: string, limit = 50): SearchHit[] {
    const needle = fold(query.trim());
    if (needle === "") {
        return [];
    }
    const hits: SearchHit[] = [];
    for (const workspace of workspaces) {
        const at = fold(workspace.name).indexOf(needle);
        if (at !== -1) {
            hits.push({ workspaceId: workspace.id, workspaceName: workspace.name, ...snippet(workspace.name, at, needle.length) });
        }
    }
    for (const workspace of workspaces) {
        const messages = [
            ...workspace.messages.map((message) => ({ message, otherBranch: false })),
            ...(workspace.branches ?? []).map((message) => ({ message, otherBranch: true }))
        ];
        for (const { message, otherBranch } of messages) {
            if (hits.length >= limit) {
                return hits;
            }
            const at = fold(message.content).indexOf(needle);
            if (at !== -1) {
                hits.push({
                    workspaceId: workspace.id,
                    workspaceName: workspace.name,
                    messageId: message.id,
                    role: message.role,
                    otherBranch,
                    ...snippet(message.content, at, needle.length)
                });
            }
        }
    }
    return hits.slice(0, limit);
}

/** Lower case without accents, each character folded only when its length stays (so positions in it are positions in the text). */
function fold(text: string): string {
    return Array.from(text, (char) => {
        const folded = char.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
        return folded.length === char.length ? folded : char;
    }).join("");
}

/** The match with some text either side; each whitespace character shown as one space. */
function snippet(text: string, at: number, length: number): { snippet: string; matchStart: number; matchLength: number } {
    const start = Math.max(0, at - SNIPPET_BEFORE);
    const end = Math.min(text.length, at + length + SNIPPET_AFTER);
    const prefix = start > 0 ? "…" : "";
    const suffix = end < text.length ? "…" : "";
    return {
        snippet: prefix + text.slice(start, end).replace(/\s/g, " ") + suffix,
        matchStart: prefix.length + at - start,
        matchLength: length
    };
}
