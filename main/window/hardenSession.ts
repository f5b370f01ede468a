import type { Session } from "electron";

/**
 * Denies every permission (camera, notifications, geolocation, devices...) and attaches the
 * Content-Security-Policy header to every response the session receives. The app needs no
 * permission; a feature that does should grant exactly that one, here.
 */
export function hardenSession(session: Session, contentSecurityPolicy: string): void {
    session.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
    session.setPermissionCheckHandler(() => false);
    session.setDevicePermissionHandler(() => false);
    session.webRequest.onHeadersReceived((details, callback) => {
        callback({
            responseHeaders: {
                ...details.responseHeaders,
                "Content-Security-Policy": [contentSecurityPolicy]
            }
        });
    });
}
