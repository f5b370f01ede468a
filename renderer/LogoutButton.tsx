import { useState } from "react";
import { logOut, sessionToken } from "./rpc/browserSession.js";

/** Ends this browser's login session (headless mode only: the desktop app has no login). */
export function LogoutButton() {
    const [loggingOut, setLoggingOut] = useState(false);
    if (window.kvault !== undefined || sessionToken() === undefined) {
        return null;
    }
    return (
        <button
            type="button"
            className="logout-button"
            aria-label="Log out"
            disabled={loggingOut}
            title="End this browser's session: opening the app again needs a new login link."
            onClick={() => {
                setLoggingOut(true);
                void logOut().catch(() => undefined);
            }}
        >
            Log out
        </button>
    );
}
