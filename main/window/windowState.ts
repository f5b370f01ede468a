// Pure on purpose: where the window opens. The size and position it had when it was last moved
// or resized, kept whole on one display's work area, so a window saved on a monitor that has
// since gone (or shrunk) never opens off-screen or larger than the screen.

/** In device-independent pixels, as Electron's Rectangle. */
export interface Rectangle {
    readonly x: number;
    readonly y: number;
    readonly width: number;
    readonly height: number;
}

export interface WindowState {
    /** The normal (not maximized, not full-screen) bounds. */
    readonly bounds: Rectangle;
    readonly maximized: boolean;
    readonly fullScreen: boolean;
}

/** Defaults in one place; windowOptions.ts uses the same minimum size. */
export const windowStateDefaults = {
    width: 1280,
    height: 800,
    minWidth: 720,
    minHeight: 480
} as const;

/** Coordinates beyond this are not a screen position (a hand-edited or damaged file). */
const MAX_COORDINATE = 100_000;

/** The state from window-state.json, or undefined when it is not one; unknown fields are ignored. */
export function parseWindowState(value: unknown): WindowState | undefined {
    const record = isRecord(value) ? value : {};
    const bounds = isRecord(record.bounds) ? record.bounds : {};
    const [x, y, width, height] = [bounds.x, bounds.y, bounds.width, bounds.height];
    if (!isCoordinate(x) || !isCoordinate(y) || !isSize(width) || !isSize(height)) {
        return undefined;
    }
    return { bounds: { x, y, width, height }, maximized: record.maximized === true, fullScreen: record.fullScreen === true };
}

/**
 * The bounds to open the window with, given the displays' work areas (the screen less the task bar
 * or dock) and the primary one's: the saved bounds on the display they overlap most, shrunk to fit
 * it and moved fully onto it; with nothing saved, or nothing overlapping any display, the default
 * size centred on the primary display.
 */
export function placeWindow(saved: WindowState | undefined, workAreas: readonly Rectangle[], primary: Rectangle): WindowState {
    const display = saved === undefined ? undefined : largestOverlap(saved.bounds, workAreas);
    if (saved === undefined || display === undefined) {
        return {
            bounds: centred(primary, windowStateDefaults.width, windowStateDefaults.height),
            maximized: saved?.maximized ?? false,
            fullScreen: false
        };
    }
    const width = fit(saved.bounds.width, windowStateDefaults.minWidth, display.width);
    const height = fit(saved.bounds.height, windowStateDefaults.minHeight, display.height);
    return {
        bounds: {
            x: clamp(saved.bounds.x, display.x, display.x + display.width - width),
            y: clamp(saved.bounds.y, display.y, display.y + display.height - height),
            width,
            height
        },
        maximized: saved.maximized,
        fullScreen: saved.fullScreen
    };
}

function largestOverlap(bounds: Rectangle, workAreas: readonly Rectangle[]): Rectangle | undefined {
    let best: Rectangle | undefined;
    let bestArea = 0;
    for (const area of workAreas) {
        const overlap =
            Math.max(0, Math.min(bounds.x + bounds.width, area.x + area.width) - Math.max(bounds.x, area.x)) *
            Math.max(0, Math.min(bounds.y + bounds.height, area.y + area.height) - Math.max(bounds.y, area.y));
        if (overlap > bestArea) {
            best = area;
            bestArea = overlap;
        }
    }
    return best;
}

function centred(area: Rectangle, width: number, height: number): Rectangle {
    const fitted = {
        width: fit(width, windowStateDefaults.minWidth, area.width),
        height: fit(height, windowStateDefaults.minHeight, area.height)
    };
    return {
        x: Math.round(area.x + (area.width - fitted.width) / 2),
        y: Math.round(area.y + (area.height - fitted.height) / 2),
        ...fitted
    };
}

/** `size`, no larger than `available`, and no smaller than `minimum` unless the display itself is. */
function fit(size: number, minimum: number, available: number): number {
    return Math.round(Math.min(Math.max(size, minimum), available));
}

function clamp(value: number, low: number, high: number): number {
    return Math.round(Math.min(Math.max(value, low), Math.max(low, high)));
}

function isCoordinate(value: unknown): value is number {
    return typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= MAX_COORDINATE;
}

function isSize(value: unknown): value is number {
    return typeof value === "number" && Number.isFinite(value) && value >= 1 && value <= MAX_COORDINATE;
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
