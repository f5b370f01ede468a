import { pageStateNames } from "../../contract/EngineSnapshot.js";
import { Swatch } from "../workspaces/Swatch.js";
import { workspacePalette } from "../workspaces/workspacePalette.js";
import { pageFill, type PageMapTheme } from "./pageColour.js";

const stateDescriptions: Readonly<Record<(typeof pageStateNames)[number], string>> = {
    free: "zeroed, on the free list",
    reserved: "taken for a request, not yet written",
    written: "holds KV, not yet sealed",
    sealed: "checksummed; a handoff in flight or a swapped-out workspace",
    quarantined: "released, waiting for in-flight reads to drain before the scrub"
};

/** What each state looks like, shown in the first workspace colour; each workspace has its own colour. */
export function PageMapLegend({ theme }: { readonly theme: PageMapTheme }) {
    return (
        <ul className="page-map-legend" aria-label="Page map legend">
            {pageStateNames.map((state) => {
                const fill = pageFill(state, workspacePalette[0].hex, theme);
                return (
                    <li key={state} title={stateDescriptions[state]}>
                        <Swatch colour={fill.colour} hatched={fill.hatched} hatchColour={theme.hatch} />
                        <span>{state}</span>
                    </li>
                );
            })}
        </ul>
    );
}
