import { useRef, type KeyboardEvent } from "react";
import { APP_VIEWS } from "./appViews.js";
import { useViewStore } from "./viewStore.js";
import "./ViewRail.css";

/**
 * The rail of views (a vertical tab list, WAI-ARIA's tabs pattern): one tab stop, arrow keys move
 * between views and show them, Home and End go to the first and last. Below 1100 px it keeps only
 * its icons; at 720 px and below it lies across the top of the window (ViewRail.css).
 */
export function ViewRail() {
    const view = useViewStore((state) => state.view);
    const tabs = useRef<(HTMLButtonElement | null)[]>([]);

    const onKeyDown = (event: KeyboardEvent): void => {
        const index = APP_VIEWS.findIndex((entry) => entry.id === view);
        const last = APP_VIEWS.length - 1;
        const next =
            event.key === "ArrowDown" || event.key === "ArrowRight"
                ? (index + 1) % APP_VIEWS.length
                : event.key === "ArrowUp" || event.key === "ArrowLeft"
                  ? (index + last) % APP_VIEWS.length
                  : event.key === "Home"
                    ? 0
                    : event.key === "End"
                      ? last
                      : undefined;
        if (next === undefined) {
            return;
        }
        event.preventDefault();
        useViewStore.getState().showView(APP_VIEWS[next]!.id);
        tabs.current[next]?.focus();
    };

    return (
        <nav className="view-rail" aria-label="Views">
            <div role="tablist" aria-orientation="vertical" aria-label="Views" onKeyDown={onKeyDown}>
                {APP_VIEWS.map((entry, index) => {
                    const selected = entry.id === view;
                    const Icon = entry.icon;
                    return (
                        <button
                            key={entry.id}
                            ref={(element) => {
                                tabs.current[index] = element;
                            }}
                            type="button"
                            role="tab"
                            id={`rail-${entry.id}`}
                            className="view-rail-tab"
                            aria-selected={selected}
                            aria-controls={`view-${entry.id}`}
                            aria-label={entry.label}
                            aria-keyshortcuts={`Alt+${entry.digit}`}
                            title={`${entry.label} (Alt+${entry.digit})`}
                            tabIndex={selected ? 0 : -1}
                            onClick={() => useViewStore.getState().showView(entry.id)}
                        >
                            <Icon aria-hidden="true" size={18} />
                            <span className="view-rail-label">{entry.label}</span>
                        </button>
                    );
                })}
            </div>
        </nav>
    );
}
