import { useEffect, useState } from "react";
import type { AppInfo } from "../contract/KvaultBridge.js";

/**
 * The host's version and platform, once they arrive. Stays undefined where there is no
 * Electron host (the headless server's browser has no window.kvault).
 */
export function useAppInfo(): AppInfo | undefined {
    const [appInfo, setAppInfo] = useState<AppInfo>();

    useEffect(() => {
        const bridge = window.kvault;
        if (bridge === undefined) {
            return;
        }
        // Ignores an answer that arrives after unmount (StrictMode mounts twice in development).
        let isCurrent = true;
        bridge.getAppInfo().then(
            (info) => {
                if (isCurrent) {
                    setAppInfo(info);
                }
            },
            (error: unknown) => console.error("Could not read the app info from the host.", error)
        );
        return () => {
            isCurrent = false;
        };
    }, []);

    return appInfo;
}
