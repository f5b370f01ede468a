import { pageStateNames } from "../../contract/EngineSnapshot.js";
import { formatCount } from "../util/formatCount.js";
import { Swatch } from "../workspaces/Swatch.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { ownerLabel } from "./ownerLabel.js";
import { pageFill, type PageMapTheme } from "./pageColour.js";
import type { PageMapSummary } from "./summarizePageMap.js";

const ownedStates = pageStateNames.filter((state) => state !== "free");

/** Column headings short enough for the panel; the full state name is the accessible name. */
const shortNames: Readonly<Record<(typeof ownedStates)[number], string>> = {
    reserved: "res.",
    written: "writ.",
    sealed: "sealed",
    quarantined: "quar."
};

/**
 * The page map in numbers: pages by owner and state, counted from the same arrays the canvas
 * draws. Screen readers read this table; tests read its data attributes.
 */
export function PageOwnerTable({
    summary,
    workspaces,
    theme
}: {
    readonly summary: PageMapSummary;
    readonly workspaces: readonly Workspace[];
    readonly theme: PageMapTheme;
}) {
    return (
        <table
            className="page-owner-table"
            aria-label="Pages by owner and state"
            data-num-pages={summary.numPages}
            data-free={summary.byState.free}
        >
            <thead>
                <tr>
                    <th scope="col">Owner</th>
                    <th scope="col">Pages</th>
                    {ownedStates.map((state) => (
                        <th key={state} scope="col" title={state} aria-label={state}>
                            {shortNames[state]}
                        </th>
                    ))}
                </tr>
            </thead>
            <tbody>
                <tr data-owner="free" data-num-pages={summary.byState.free}>
                    <th scope="row">
                        <Swatch colour={theme.free} /> Free
                    </th>
                    <td>{formatCount(summary.byState.free)}</td>
                    {ownedStates.map((state) => (
                        <td key={state} />
                    ))}
                </tr>
                {summary.owners.map((entry) => {
                    const label = ownerLabel(entry.owner, workspaces);
                    return (
                        <tr
                            key={entry.owner ?? ""}
                            data-owner={entry.owner ?? "none"}
                            data-owner-name={label.name}
                            data-colour={label.colour ?? ""}
                            data-num-pages={entry.numPages}
                        >
                            <th scope="row">
                                <Swatch colour={pageFill("sealed", label.colour, theme).colour} /> {label.name}
                            </th>
                            <td>{formatCount(entry.numPages)}</td>
                            {ownedStates.map((state) => (
                                <td key={state} data-state={state}>
                                    {entry.byState[state] === 0 ? "" : formatCount(entry.byState[state])}
                                </td>
                            ))}
                        </tr>
                    );
                })}
            </tbody>
        </table>
    );
}
