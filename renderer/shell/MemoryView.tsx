import { useEffect, useState } from "react";
import { LoadedModelPicker } from "../memory/LoadedModelPicker.js";
import { PageMap } from "../pageMap/PageMap.js";
import { MemoryTimelineSlot } from "./MemoryTimelineSlot.js";
import "./MemoryView.css";

/** What the header, the legend, the hover line and the owner table's first rows leave the grid of the window's height (CSS pixels). */
const MEMORY_VIEW_CHROME_HEIGHT = 300;
/** The grid never gets less than the side column's page map had. */
const MIN_GRID_HEIGHT = 360;

/** The whole view for KV memory: the page map (role contexts, sequences, the pool, its owner table), then the timeline's slot. */
export function MemoryView() {
    const [windowHeight, setWindowHeight] = useState(() => window.innerHeight);
    useEffect(() => {
        const onResize = (): void => setWindowHeight(window.innerHeight);
        window.addEventListener("resize", onResize);
        return () => window.removeEventListener("resize", onResize);
    }, []);
    return (
        <div className="memory-view">
            <h2 className="view-title">Memory</h2>
            <LoadedModelPicker />
            <div className="memory-view-map">
                <PageMap maxGridHeight={Math.max(MIN_GRID_HEIGHT, windowHeight - MEMORY_VIEW_CHROME_HEIGHT)} />
            </div>
            <MemoryTimelineSlot />
        </div>
    );
}
