import type { StoreProblem } from "../../contract/workspaces.js";
import { formatCount } from "../util/formatCount.js";

/** One problem the host found reading the chats, for a person: which chat, where, and what was set aside (the copy is named once per file, beside the list). */
export function describeStoreProblem(problem: StoreProblem): string {
    const where =
        problem.workspaceName !== null
            ? `“${problem.workspaceName}”${problem.line === null ? "" : `, line ${formatCount(problem.line)} of its chat file`}`
            : problem.file;
    const what =
        problem.kind === "truncated"
            ? "the last message was cut short (Kvault stopped while saving it)"
            : `a damaged record (${problem.reason})`;
    return `${where}: ${what}; ${formatCount(problem.bytes)} bytes set aside.`;
}
