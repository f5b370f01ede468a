import { describe, expect, it } from "vitest";
import { ownerLabel } from "../../../../renderer/pageMap/ownerLabel.js";
import { workspacePalette } from "../../../../renderer/workspaces/workspacePalette.js";
import type { Workspace } from "../../../../renderer/workspaces/Workspace.js";

const workspaces: Workspace[] = [
    { id: "ui-1", name: "Research", colour: 2, settings: { systemPrompt: "", temperature: 0, maxTokens: 8 }, messages: [] }
];

describe("ownerLabel", () => {
    it("names this window's workspaces with their colour, and everyone else without one", () => {
        expect(ownerLabel("ui-1", workspaces)).toEqual({ name: "Research", colour: workspacePalette[2].hex, isOwnWorkspace: true });
        expect(ownerLabel("api:team", workspaces)).toEqual({ name: "API workspace “team”", colour: undefined, isOwnWorkspace: false });
        expect(ownerLabel("api-request:123", workspaces).name).toBe("An API request");
        expect(ownerLabel("ui-2", workspaces).name).toBe("A workspace of another window");
        expect(ownerLabel(undefined, workspaces).name).toBe("No owner");
    });
});
