import { utilityProcess } from "electron";
import { RECENT_OUTPUT_CHARS, type InspectionSpawner } from "../../host/models/inspectionProcess.js";

/** Shown in Electron's process metrics and crash reports. */
const INSPECTION_SERVICE_NAME = "Kvault model inspection";

/**
 * The app's way to start the process that reads model files (host/models/inspectModelInChild.ts):
 * an Electron utilityProcess of the built entry (out/main/inspectModelProcess.js), because the
 * packaged app's fuses forbid child_process.fork of Electron as Node. `extraEnv` carries the
 * binding-test relay's address (main/engine/BindingTestRelay.ts). Call only after app 'ready'.
 */
export function utilityInspectionSpawner(entry: string, extraEnv: Readonly<Record<string, string>> = {}): InspectionSpawner {
    return ({ env, execArgv }) => {
        const child = utilityProcess.fork(entry, [], {
            serviceName: INSPECTION_SERVICE_NAME,
            execArgv: [...execArgv],
            env: { ...process.env, ...extraEnv, ...env } as Record<string, string>,
            stdio: ["ignore", "ignore", "pipe"]
        });
        let recent = "";
        let exited = false;
        const exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
        child.stderr?.setEncoding("utf8");
        child.stderr?.on("data", (chunk: string) => {
            recent = (recent + chunk).slice(-RECENT_OUTPUT_CHARS);
        });
        // A V8 fatal error in the child; with no listener it would throw in the main process.
        child.on("error", (type, location) => {
            recent = (recent + `\nFatal ${type} at ${location}`).slice(-RECENT_OUTPUT_CHARS);
        });
        child.on("exit", (code) => {
            exited = true;
            exitListeners.forEach((listener) => listener(code, null));
        });
        return {
            onMessage: (listener) => void child.on("message", listener),
            onExit: (listener) => void exitListeners.push(listener),
            kill: () => {
                if (!exited) {
                    child.kill();
                }
            },
            recentOutput: () => recent
        };
    };
}
