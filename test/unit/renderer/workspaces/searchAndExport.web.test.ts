import { describe, expect, it } from "vitest";
import { chatExportFormat } from "../../../../contract/workspaces.js";
import { defaultWorkspaceSettings } from "../../../../contract/workspaces.js";
import { chatJson, chatMarkdown, exportFileName } from "../../../../renderer/workspaces/chatExport.js";
import { searchWorkspaces } from "../../../../renderer/workspaces/searchWorkspaces.js";
import type { Workspace } from "../../../../renderer/workspaces/Workspace.js";

const research: Workspace = {
    id: "ui-a",
    name: "Café research",
    colour: 1,
    settings: { ...defaultWorkspaceSettings, systemPrompt: "Be brief.", topK: 40 },
    messages: [
        { id: "m-1", role: "user", content: "Where are the PAGES kept?" },
        {
            id: "m-2",
            role: "assistant",
            content: "In host memory.\nEach page is zeroed.",
            finish: "length",
            usage: { promptTokens: 9, cachedPromptTokens: 0, evaluatedPromptTokens: 9, completionTokens: 7 }
        }
    ],
    branches: [{ id: "m-3", role: "assistant", content: "An older answer about pages.", parent: "m-1" }]
};
const drafts: Workspace = { id: "ui-b", name: "Drafts", colour: 2, settings: defaultWorkspaceSettings, messages: [] };

describe("searchWorkspaces", () => {
    it("finds names first, then message text on every branch, ignoring case and accents, with the match marked", () => {
        const hits = searchWorkspaces([research, drafts], "  cafe ");
        expect(hits).toEqual([
            { workspaceId: "ui-a", workspaceName: "Café research", snippet: "Café research", matchStart: 0, matchLength: 4 }
        ]);
        const pages = searchWorkspaces([research, drafts], "pages");
        expect(pages.map((hit) => [hit.messageId, hit.otherBranch])).toEqual([
            ["m-1", false],
            ["m-3", true]
        ]);
        const first = pages[0]!;
        expect(first.snippet.slice(first.matchStart, first.matchStart + first.matchLength)).toBe("PAGES");
        expect(searchWorkspaces([research], "page is")[0]!.snippet).toBe("In host memory. Each page is zeroed.");
    });

    it("finds nothing for an empty query, and stops at the limit", () => {
        expect(searchWorkspaces([research], "   ")).toEqual([]);
        expect(searchWorkspaces([research], "e", 2)).toHaveLength(2);
        expect(searchWorkspaces([research], "absent")).toEqual([]);
    });
});

describe("chat export", () => {
    const now = new Date("2026-01-05T05:04:49.123Z");

    it("writes JSON that holds every branch and the settings, in the format Import reads", () => {
        const document = JSON.parse(chatJson(research, now)) as Record<string, unknown>;
        expect(document).toEqual({
            ...chatExportFormat,
            exportedAt: "2026-01-05T05:04:49.123Z",
            workspace: { name: "Café research", colour: 1, settings: research.settings },
            messages: research.messages,
            branches: research.branches
        });
    });

    it("writes Markdown of the branch shown, with the system prompt and the answer's notes", () => {
        expect(chatMarkdown(research, now)).toBe(
            [
                "# Café research",
                "",
                "Exported from Kvault on 2026-01-05T05:04:49.123Z.",
                "",
                "## System prompt",
                "",
                "Be brief.",
                "",
                "## You",
                "",
                "Where are the PAGES kept?",
                "",
                "## Model",
                "",
                "In host memory.\nEach page is zeroed.",
                "",
                "*7 tokens, reached Max tokens*",
                ""
            ].join("\n")
        );
    });

    it("names the file after the workspace with only safe characters", () => {
        expect(exportFileName(research, "json")).toBe("Cafe-research.kvault-chat.json");
        expect(exportFileName({ ...drafts, name: "../../..\\/" }, "md")).toBe("chat.kvault-chat.md");
    });
});
