/**
 * Workspace colours, chosen to read on both light and dark backgrounds and to stay apart from
 * each other in the page map. A workspace stores an index into this list.
 */
export const workspacePalette = [
    { name: "Blue", hex: "#3b82f6" },
    { name: "Orange", hex: "#f97316" },
    { name: "Green", hex: "#22c55e" },
    { name: "Pink", hex: "#ec4899" },
    { name: "Teal", hex: "#14b8a6" },
    { name: "Amber", hex: "#eab308" },
    { name: "Violet", hex: "#8b5cf6" },
    { name: "Red", hex: "#ef4444" }
] as const;

export type WorkspaceColour = number;

/** The palette entry of a stored colour index, wrapping indexes from a longer palette. */
export function paletteColour(colour: WorkspaceColour): (typeof workspacePalette)[number] {
    const index = ((Math.trunc(colour) % workspacePalette.length) + workspacePalette.length) % workspacePalette.length;
    return workspacePalette[index]!;
}

/** The first colour no workspace uses yet, else the least used one. */
export function nextFreeColour(used: readonly WorkspaceColour[]): WorkspaceColour {
    const counts = workspacePalette.map((_, index) => used.filter((colour) => colour === index).length);
    return counts.indexOf(Math.min(...counts));
}
