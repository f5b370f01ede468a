// The API the preload exposes to the renderer as `window.kvault`. Only named calls cross
// the bridge; the renderer never sees ipcRenderer (STYLE.md 10).

export interface AppInfo {
    /** The app's version from package.json, e.g. "0.1.0". */
    readonly version: string;
    /** Node's `process.platform` of the host, e.g. "darwin", "win32", "linux". */
    readonly platform: string;
}

export interface KvaultBridge {
    getAppInfo(): Promise<AppInfo>;
}
