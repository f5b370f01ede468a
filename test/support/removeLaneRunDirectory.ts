import { rmSync } from "node:fs";
import { laneRunDirectory } from "./LaneLock.js";

// A globalSetup of the lane projects, which run in the vitest process whose pid names the run's lanes
// (vitest.config.ts): its teardown removes the run's lane folder, empty by then, so no run leaves one
// behind in the temporary folder. Removing a folder already gone is a no-op, so each project may.
export default function setup(): () => void {
    return () => rmSync(laneRunDirectory(String(process.pid)), { recursive: true, force: true });
}
