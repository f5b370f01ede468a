import { useEffect } from "react";
import { useEngineStore } from "../stores/engineStore.js";
import { useUiStore } from "../stores/uiStore.js";
import type { IsolationController } from "./IsolationController.js";

/**
 * Keeps the audit and the replayable turns fresh while the isolation panel is open and the page
 * visible, and takes the engine's own audits from every snapshot the page mirrors.
 */
export function useIsolationWatch(controller: IsolationController): void {
    useEffect(() => {
        const watch = controller.watch({
            isOpen: () => useUiStore.getState().isolationOpen,
            isVisible: () => document.visibilityState === "visible"
        });
        const unsubscribeUi = useUiStore.subscribe((state, previous) => {
            if (state.isolationOpen && !previous.isolationOpen) {
                watch.refresh();
            }
        });
        controller.adoptAuditFeed(useEngineStore.getState().snapshot?.audit);
        const unsubscribeEngine = useEngineStore.subscribe((state, previous) => {
            if (state.snapshot !== previous.snapshot) {
                controller.adoptAuditFeed(state.snapshot?.audit);
            }
        });
        const onVisibility = (): void => watch.refresh();
        document.addEventListener("visibilitychange", onVisibility);
        return () => {
            watch.stop();
            unsubscribeUi();
            unsubscribeEngine();
            document.removeEventListener("visibilitychange", onVisibility);
        };
    }, [controller]);
}
