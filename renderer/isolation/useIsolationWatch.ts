import { useEffect } from "react";
import { useUiStore } from "../stores/uiStore";
import type { IsolationController } from "./IsolationController";

/** Keeps the audit and the replayable turns fresh while the isolation panel is open and the page visible. */
export function useIsolationWatch(controller: IsolationController): void {
    useEffect(() => {
        const watch = controller.watch({
            isOpen: () => useUiStore.getState().isolationOpen,
            isVisible: () => document.visibilityState === "visible"
        });
        const unsubscribeUi = useUiStore.subscribe((state, previous) => {
            if (state.isolationOpen && !previous.isolationOpen)
                watch.refresh();
        });
        const onVisibility = (): void => watch.refresh();
        document.addEventListener("visibilitychange", onVisibility);
        return () => {
            watch.stop();
            unsubscribeUi();
            document.removeEventListener("visibilitychange", onVisibility);
        };
    }, [controller]);
}
