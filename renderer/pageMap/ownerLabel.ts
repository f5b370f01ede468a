import { paletteColour } from "../workspaces/workspacePalette.js";
import type { Workspace } from "../workspaces/Workspace.js";

export interface OwnerLabel {
    readonly name: string;
    /** The owner's colour, when it is one of this window's workspaces. */
    readonly colour: string | undefined;
    readonly isOwnWorkspace: boolean;
}

/** How the page map names a page's owner: one of this window's workspaces, the HTTP API, or someone else. */
export function ownerLabel(owner: string | undefined, workspaces: readonly Workspace[]): OwnerLabel {
    if (owner === undefined) {
        return { name: "No owner", colour: undefined, isOwnWorkspace: false };
    }
    const workspace = workspaces.find((item) => item.id === owner);
    if (workspace !== undefined) {
        return { name: workspace.name, colour: paletteColour(workspace.colour).hex, isOwnWorkspace: true };
    }
    if (owner.startsWith("api:")) {
        return { name: `API workspace “${owner.slice("api:".length)}”`, colour: undefined, isOwnWorkspace: false };
    }
    if (owner.startsWith("api-request:")) {
        return { name: "An API request", colour: undefined, isOwnWorkspace: false };
    }
    return { name: "A workspace of another window", colour: undefined, isOwnWorkspace: false };
}
