// A second launch brings the running window back, whatever state it was left in.
import { describe, expect, it } from "vitest";
import { focusWindow, type FocusableWindow } from "../../../../main/window/focusWindow.js";

function window(state: { minimized?: boolean; visible?: boolean; destroyed?: boolean }): FocusableWindow & { calls: string[] } {
    const calls: string[] = [];
    return {
        calls,
        isDestroyed: () => state.destroyed === true,
        isMinimized: () => state.minimized === true,
        isVisible: () => state.visible !== false,
        restore: () => void calls.push("restore"),
        show: () => void calls.push("show"),
        focus: () => void calls.push("focus")
    };
}

describe("focusWindow", () => {
    it("restores a minimized window, then focuses it", () => {
        const minimized = window({ minimized: true });
        expect(focusWindow(minimized)).toBe(true);
        expect(minimized.calls).toEqual(["restore", "focus"]);
    });

    it("shows a hidden window, and only focuses one already in view", () => {
        const hidden = window({ visible: false });
        focusWindow(hidden);
        expect(hidden.calls).toEqual(["show", "focus"]);
        const open = window({});
        focusWindow(open);
        expect(open.calls).toEqual(["focus"]);
    });

    it("says there is nothing to bring back when the window is gone", () => {
        expect(focusWindow(undefined)).toBe(false);
        const destroyed = window({ destroyed: true });
        expect(focusWindow(destroyed)).toBe(false);
        expect(destroyed.calls).toEqual([]);
    });
});
