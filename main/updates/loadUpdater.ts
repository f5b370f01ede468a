// electron-updater's autoUpdater, loaded on the first Check for Updates (it reads
// resources/app-update.yml, which electron-builder writes from electron-builder.config.ts's
// `publish`), so an app that never checks never loads it. Main process only: it imports electron.
import type { Updater } from "./UpdateFlow.js";

export async function loadUpdater(): Promise<Updater> {
    // A CommonJS package whose autoUpdater is a getter, which Node's named-export detection misses: read it off module.exports.
    const { autoUpdater } = (await import("electron-updater")).default;
    return autoUpdater;
}
