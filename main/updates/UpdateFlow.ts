// Pure on purpose (no electron, no electron-updater at runtime): Help › Check for Updates…, as
// a flow that never downloads without the user's yes: check → ask → download → ask → install now
// or when the app quits. loadUpdater.ts hands it electron-updater's autoUpdater (the GitHub
// releases the Installers workflow publishes); its tests hand it a stand-in.
import type { MessageBoxOptions } from "electron";

/** The part of electron-updater's AppUpdater the flow drives; the real autoUpdater is assignable to it. */
export interface Updater {
    autoDownload: boolean;
    autoInstallOnAppQuit: boolean;
    /** Null when the updater is inactive here (not packaged, or an AppImage run from outside its file). */
    checkForUpdates(): Promise<{ readonly isUpdateAvailable: boolean; readonly updateInfo: { readonly version: string } } | null>;
    downloadUpdate(): Promise<unknown>;
    quitAndInstall(): void;
    on(event: "download-progress", listener: (progress: { readonly percent: number }) => void): unknown;
    /** electron-updater emits 'error' for every failure; unheard, an EventEmitter's 'error' would throw. */
    on(event: "error", listener: (error: Error) => void): unknown;
}

export interface UpdatePrompts {
    /** A message box over the window; resolves with the index of the button chosen. */
    ask(options: MessageBoxOptions): Promise<number>;
    /** The download's progress on the window's task bar or dock icon, 0 to 1; null clears it. */
    progress(fraction: number | null): void;
    /** Opens the releases page (through the external-link confirmation). */
    openReleases(): void;
}

export interface UpdateFlowOptions {
    readonly currentVersion: string;
    readonly platform: NodeJS.Platform;
    /** app.isPackaged: a development run has nothing to update. */
    readonly packaged: boolean;
    readonly log: (line: string) => void;
}

export type UpdateOutcome = "development" | "manual" | "up-to-date" | "declined" | "install-on-quit" | "installing" | "failed" | "busy";

/**
 * One check at a time, started by the user. macOS gets the releases page instead of a download:
 * Squirrel.Mac, which electron-updater uses there, installs only updates of a signed app, and
 * Kvault's macOS builds carry an ad-hoc signature only (docs/development.md, Installers).
 */
export class UpdateFlow {
    #updater: Updater | undefined;
    #running: Promise<UpdateOutcome> | undefined;

    constructor(
        private readonly loadUpdater: () => Promise<Updater>,
        private readonly prompts: UpdatePrompts,
        private readonly options: UpdateFlowOptions
    ) {}

    checkNow(): Promise<UpdateOutcome> {
        if (this.#running !== undefined) {
            return Promise.resolve("busy");
        }
        const run = this.#check().finally(() => {
            this.#running = undefined;
        });
        this.#running = run;
        return run;
    }

    async #check(): Promise<UpdateOutcome> {
        const { currentVersion, platform, packaged } = this.options;
        if (!packaged) {
            await this.#tell(
                "info",
                "Updates come with installed builds.",
                `This is a development run of Kvault ${currentVersion}; update it with git.`
            );
            return "development";
        }
        if (platform === "darwin") {
            return this.#offerReleasesPage(
                "Kvault for macOS cannot update itself.",
                "macOS installs updates only for signed apps, and this build of Kvault is not signed. Download the new version from the releases page and replace the app."
            );
        }
        let updater: Updater;
        let found: Awaited<ReturnType<Updater["checkForUpdates"]>>;
        try {
            updater = await this.#configured();
            found = await updater.checkForUpdates();
        } catch (error) {
            return this.#failed("Kvault could not check for updates", error);
        }
        if (found === null) {
            return this.#offerReleasesPage(
                "This copy of Kvault cannot update itself.",
                "Updates install into an AppImage, a deb or a Windows installation of Kvault; this copy runs from elsewhere. Download the new version from the releases page."
            );
        }
        const { version } = found.updateInfo;
        if (!found.isUpdateAvailable) {
            await this.#tell("info", `Kvault ${currentVersion} is up to date.`, "No newer release was found.");
            return "up-to-date";
        }
        const download = await this.prompts.ask({
            type: "info",
            buttons: ["Download", "Not Now"],
            defaultId: 0,
            cancelId: 1,
            noLink: true,
            message: `Kvault ${version} is available (you have ${currentVersion}).`,
            detail: "Download it now? Nothing is installed until you restart or quit Kvault."
        });
        if (download !== 0) {
            return "declined";
        }
        try {
            await updater.downloadUpdate();
        } catch (error) {
            return this.#failed(`Kvault ${version} could not be downloaded`, error);
        } finally {
            this.prompts.progress(null);
        }
        const restart = await this.prompts.ask({
            type: "info",
            buttons: ["Restart Now", "Later"],
            defaultId: 0,
            cancelId: 1,
            noLink: true,
            message: `Kvault ${version} is ready to install.`,
            detail: "Restart now to install it, or it installs when you quit Kvault. Your chats are kept either way."
        });
        if (restart !== 0) {
            return "install-on-quit";
        }
        updater.quitAndInstall();
        return "installing";
    }

    /** Loaded and set up on the first check: no download without asking, installed at quit once downloaded. */
    async #configured(): Promise<Updater> {
        if (this.#updater === undefined) {
            const updater = await this.loadUpdater();
            updater.autoDownload = false;
            updater.autoInstallOnAppQuit = true;
            updater.on("download-progress", (progress) => this.prompts.progress(Math.min(1, Math.max(0, progress.percent / 100))));
            updater.on("error", (error) => this.options.log(`Updates: ${error.message}`));
            this.#updater = updater;
        }
        return this.#updater;
    }

    async #offerReleasesPage(message: string, detail: string): Promise<UpdateOutcome> {
        const answer = await this.prompts.ask({
            type: "info",
            buttons: ["Open Releases Page", "Close"],
            defaultId: 0,
            cancelId: 1,
            noLink: true,
            message,
            detail
        });
        if (answer === 0) {
            this.prompts.openReleases();
        }
        return "manual";
    }

    async #failed(what: string, error: unknown): Promise<UpdateOutcome> {
        const reason = error instanceof Error ? error.message.split("\n", 1)[0]! : String(error);
        this.options.log(`${what}: ${reason}`);
        await this.#tell(
            "warning",
            `${what}.`,
            `${reason}\n\nCheck your connection and try again, or download Kvault from the releases page.`
        );
        return "failed";
    }

    async #tell(type: "info" | "warning", message: string, detail: string): Promise<void> {
        await this.prompts.ask({ type, buttons: ["OK"], defaultId: 0, noLink: true, message, detail });
    }
}
