import { chatExportFormat, type ChatExport, type StoredMessage } from "../../contract/workspaces.js";
import type { Workspace } from "./Workspace.js";

/**
 * Export JSON: the whole chat, every branch included, as Import JSON reads it back
 * (contract/workspaces.ts ChatExport). `now` is the export's time.
 */
export function chatJson(workspace: Workspace, now: Date): string {
    const document: ChatExport = {
        ...chatExportFormat,
        exportedAt: now.toISOString(),
        workspace: { name: workspace.name, colour: workspace.colour, settings: workspace.settings },
        messages: workspace.messages,
        branches: workspace.branches ?? []
    };
    return `${JSON.stringify(document, null, 2)}\n`;
}

/** Export Markdown: the branch shown, for reading: a heading per message, its text as it is (it is Markdown already). */
export function chatMarkdown(workspace: Workspace, now: Date): string {
    const lines = [`# ${workspace.name}`, "", `Exported from Kvault on ${now.toISOString()}.`, ""];
    if (workspace.settings.systemPrompt.trim() !== "") {
        lines.push("## System prompt", "", workspace.settings.systemPrompt, "");
    }
    for (const message of workspace.messages) {
        lines.push(`## ${message.role === "user" ? "You" : "Model"}`, "", message.content, "");
        const note = footnote(message);
        if (note !== "") {
            lines.push(`*${note}*`, "");
        }
    }
    return `${lines.join("\n").trimEnd()}\n`;
}

function footnote(message: StoredMessage): string {
    const parts: string[] = [];
    if (message.usage !== undefined) {
        parts.push(`${message.usage.completionTokens} tokens`);
    }
    if (message.finish === "length") {
        parts.push("reached Max tokens");
    } else if (message.finish === "stopped") {
        parts.push("stopped");
    }
    return parts.join(", ");
}

/** A file name for the export: the workspace's name with only safe characters, and the extension. */
export function exportFileName(workspace: Workspace, extension: "md" | "json"): string {
    const base = workspace.name
        .normalize("NFKD")
        .replace(/[^\w -]+/g, "")
        .trim()
        .replace(/\s+/g, "-")
        .slice(0, 60);
    return `${base === "" ? "chat" : base}.kvault-chat.${extension}`;
}
