// Where the window opens: its saved bounds, kept whole on a display that is there now; and the
// store that saves them as the window moves, on a real file.
import { EventEmitter } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { parseWindowState, placeWindow, windowStateDefaults, type Rectangle } from "../../../../main/window/windowState.js";
import { WindowStateStore, type TrackedWindow, type TrackedWindowEvent } from "../../../../main/window/WindowStateStore.js";

const laptop: Rectangle = { x: 0, y: 0, width: 1440, height: 875 }; // 1440×900 less the menu bar
const monitor: Rectangle = { x: 1440, y: -200, width: 2560, height: 1400 };
const state = (bounds: Rectangle, flags: { maximized?: boolean; fullScreen?: boolean } = {}) => ({
    bounds,
    maximized: flags.maximized ?? false,
    fullScreen: flags.fullScreen ?? false
});

describe("placeWindow", () => {
    it("opens at the default size, centred on the primary display, the first time", () => {
        expect(placeWindow(undefined, [laptop], laptop)).toEqual(
            state({ x: 80, y: 38, width: windowStateDefaults.width, height: windowStateDefaults.height })
        );
    });

    it("opens where it was when that is on a display", () => {
        const saved = state({ x: 1600, y: 0, width: 1800, height: 1000 }, { maximized: true });
        expect(placeWindow(saved, [laptop, monitor], laptop)).toEqual(saved);
    });

    it("comes back onto the laptop when the monitor it was on is gone", () => {
        const placed = placeWindow(state({ x: 1600, y: 0, width: 1800, height: 1000 }), [laptop], laptop);
        expect(placed.bounds).toEqual({ x: 80, y: 38, width: 1280, height: 800 });
    });

    it("is moved fully onto the display it mostly overlaps, and shrunk to fit it", () => {
        expect(placeWindow(state({ x: -300, y: 700, width: 2000, height: 600 }), [laptop, monitor], laptop).bounds).toEqual({
            x: 0,
            y: 275,
            width: 1440,
            height: 600
        });
        expect(placeWindow(state({ x: 3900, y: 1100, width: 800, height: 600 }), [laptop, monitor], laptop).bounds).toEqual({
            x: 3200,
            y: 600,
            width: 800,
            height: 600
        });
    });

    it("never opens smaller than the minimum size, unless the display itself is smaller", () => {
        expect(placeWindow(state({ x: 10, y: 10, width: 100, height: 50 }), [laptop], laptop).bounds).toMatchObject({
            width: windowStateDefaults.minWidth,
            height: windowStateDefaults.minHeight
        });
        const tiny: Rectangle = { x: 0, y: 0, width: 640, height: 400 };
        expect(placeWindow(undefined, [tiny], tiny).bounds).toEqual({ x: 0, y: 0, width: 640, height: 400 });
    });
});

describe("parseWindowState", () => {
    it("reads what the store writes, and nothing that is not a window's bounds", () => {
        expect(parseWindowState({ bounds: { x: -5, y: 20, width: 900, height: 700 }, maximized: true, extra: 1 })).toEqual(
            state({ x: -5, y: 20, width: 900, height: 700 }, { maximized: true })
        );
        for (const bad of [
            null,
            [],
            {},
            { bounds: { x: 0, y: 0, width: 0, height: 700 } },
            { bounds: { x: 1e9, y: 0, width: 9, height: 9 } }
        ]) {
            expect(parseWindowState(bad), JSON.stringify(bad)).toBeUndefined();
        }
    });
});

/** A window as the store sees it: bounds and flags the test sets, events it emits. */
class MovableWindow extends EventEmitter implements TrackedWindow {
    bounds: Rectangle = { x: 100, y: 100, width: 1000, height: 700 };
    maximized = false;
    getNormalBounds = (): Rectangle => this.bounds;
    isMaximized = (): boolean => this.maximized;
    isFullScreen = (): boolean => false;
    isDestroyed = (): boolean => false;
    override on(event: TrackedWindowEvent, listener: () => void): this {
        return super.on(event, listener);
    }
}

describe("WindowStateStore", () => {
    let dir: string;
    let file: string;
    const logged: string[] = [];
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-window-"));
        file = path.join(dir, "window-state.json");
        logged.length = 0;
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("saves a moment after the window moves, at once when it closes, and reads it back at the next start", async () => {
        const store = await WindowStateStore.open(file, (line) => logged.push(line), 20);
        expect(store.saved).toBeUndefined();
        const window = new MovableWindow();
        store.track(window);

        window.bounds = { x: 300, y: 200, width: 1100, height: 750 };
        window.emit("move");
        window.emit("resize");
        await vi.waitFor(() => expect(fs.existsSync(file)).toBe(true));
        expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(state({ x: 300, y: 200, width: 1100, height: 750 }));

        window.maximized = true;
        window.emit("close");
        await store.flush();
        const next = await WindowStateStore.open(file, (line) => logged.push(line));
        expect(next.saved).toEqual(state({ x: 300, y: 200, width: 1100, height: 750 }, { maximized: true }));
        expect(logged).toEqual([]);
    });

    it("treats a damaged file as nothing saved, and says so", async () => {
        fs.writeFileSync(file, "{ not json");
        expect((await WindowStateStore.open(file, (line) => logged.push(line))).saved).toBeUndefined();
        fs.writeFileSync(file, JSON.stringify({ bounds: "big" }));
        expect((await WindowStateStore.open(file, (line) => logged.push(line))).saved).toBeUndefined();
        expect(logged).toHaveLength(2);
        expect(logged[0]).toMatch(/the window opens at its default size/);
    });
});
