import { utilityProcess } from "electron";
import type { EngineProcessSpawner } from "../../host/supervisor/EngineProcessSpawner.js";
import { UtilityEngineProcess, type UtilityEngineOptions, type UtilityFork } from "./UtilityEngineProcess.js";

/** Electron's utilityProcess.fork as the pure modules take it (UtilityEngineProcess, BindingTestRelay). Call only after app 'ready'. */
export const utilityFork: UtilityFork = (modulePath, args, forkOptions) => utilityProcess.fork(modulePath, args, forkOptions);

/**
 * The app's spawner: each engine process is an Electron utilityProcess (docs/ARCHITECTURE.md,
 * Processes). Call only after app 'ready'. The adapter logic lives, tested, in UtilityEngineProcess.
 */
export function utilityProcessSpawner(options: UtilityEngineOptions): EngineProcessSpawner {
    return UtilityEngineProcess.spawner(utilityFork, options);
}
