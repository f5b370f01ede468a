import type { ReactNode } from "react";
import { APP_VIEWS, type AppView as AppViewId } from "./appViews.js";
import { useViewStore } from "./viewStore.js";

/** One view's tab panel: mounted always, hidden unless the rail shows it. */
export function AppView({ id, className, children }: { readonly id: AppViewId; readonly className: string; readonly children: ReactNode }) {
    const shown = useViewStore((state) => state.view === id);
    const label = APP_VIEWS.find((entry) => entry.id === id)?.label;
    return (
        <section
            id={`view-${id}`}
            role="tabpanel"
            aria-labelledby={`rail-${id}`}
            aria-label={label}
            className={`app-view ${className}`}
            hidden={!shown}
        >
            {children}
        </section>
    );
}
