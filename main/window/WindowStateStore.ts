// Pure on purpose (no electron at runtime): keeps window-state.json in userData equal to the
// window's normal bounds and its maximized and full-screen flags. A BrowserWindow is a
// TrackedWindow; tests pass a small emitter.
import fs from "node:fs/promises";
import { writeFileAtomic } from "../../host/store/writeFileAtomic.js";
import { parseWindowState, type Rectangle, type WindowState } from "./windowState.js";

/** The part of a BrowserWindow the store reads. */
export interface TrackedWindow {
    getNormalBounds(): Rectangle;
    isMaximized(): boolean;
    isFullScreen(): boolean;
    isDestroyed(): boolean;
    on(event: TrackedWindowEvent, listener: () => void): unknown;
}

export type TrackedWindowEvent = "resize" | "move" | "maximize" | "unmaximize" | "enter-full-screen" | "leave-full-screen" | "close";

export const windowStateStoreDefaults = {
    /** Moving or resizing fires many events; one save after they stop (ms). */
    saveDelayMs: 500
} as const;

/**
 * Reads the saved state once, then saves the tracked window's state a moment after each move or
 * resize and at once when it closes. A missing or unreadable file is no saved state (logged when
 * unreadable); a failed write is logged and the previous file stays.
 */
export class WindowStateStore {
    #timer: ReturnType<typeof setTimeout> | undefined;
    #writing: Promise<void> = Promise.resolve();
    #lastWritten: string | undefined;

    private constructor(
        readonly filePath: string,
        readonly saved: WindowState | undefined,
        private readonly log: (line: string) => void,
        private readonly saveDelayMs: number
    ) {}

    static async open(
        filePath: string,
        log: (line: string) => void,
        saveDelayMs: number = windowStateStoreDefaults.saveDelayMs
    ): Promise<WindowStateStore> {
        let saved: WindowState | undefined;
        try {
            saved = parseWindowState(JSON.parse(await fs.readFile(filePath, "utf8")));
            if (saved === undefined) {
                log(`${filePath} holds no usable window size and position; the window opens at its default size.`);
            }
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
                log(`Could not read ${filePath} (${(error as Error).message}); the window opens at its default size.`);
            }
        }
        return new WindowStateStore(filePath, saved, log, saveDelayMs);
    }

    track(window: TrackedWindow): void {
        const later = (): void => {
            clearTimeout(this.#timer);
            this.#timer = setTimeout(() => void this.#save(window), this.saveDelayMs);
        };
        for (const event of ["resize", "move", "maximize", "unmaximize", "enter-full-screen", "leave-full-screen"] as const) {
            window.on(event, later);
        }
        window.on("close", () => {
            clearTimeout(this.#timer);
            void this.#save(window);
        });
    }

    /** Resolves once every save asked for so far is on disk (or has failed and been logged). */
    flush(): Promise<void> {
        return this.#writing;
    }

    #save(window: TrackedWindow): Promise<void> {
        if (window.isDestroyed()) {
            return this.#writing;
        }
        const state: WindowState = { bounds: window.getNormalBounds(), maximized: window.isMaximized(), fullScreen: window.isFullScreen() };
        const text = `${JSON.stringify(state, null, 4)}\n`;
        this.#writing = this.#writing.then(async () => {
            if (text === this.#lastWritten) {
                return;
            }
            try {
                await writeFileAtomic(this.filePath, text);
                this.#lastWritten = text;
            } catch (error) {
                this.log(`Could not save the window's size and position to ${this.filePath} (${(error as Error).message}).`);
            }
        });
        return this.#writing;
    }
}
