import { utilityProcess } from "electron";
import type { EngineProcessSpawner } from "../../host/supervisor/EngineProcessSpawner.js";
import { UtilityEngineProcess, type UtilityEngineOptions } from "./UtilityEngineProcess.js";

/**
 * The app's spawner: each engine process is an Electron utilityProcess (docs/ARCHITECTURE.md,
 * Processes). Call only after app 'ready'. The adapter logic lives, tested, in UtilityEngineProcess.
 */
export function utilityProcessSpawner(options: UtilityEngineOptions): EngineProcessSpawner {
    return UtilityEngineProcess.spawner((modulePath, args, forkOptions) => utilityProcess.fork(modulePath, args, forkOptions), options);
}
