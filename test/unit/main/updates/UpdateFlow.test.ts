// Help › Check for Updates… against an updater stand-in that answers as electron-updater's does:
// nothing is downloaded before the user says yes, nothing installed before a restart or quit.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { UpdateFlow, type Updater, type UpdateFlowOptions, type UpdatePrompts } from "../../../../main/updates/UpdateFlow.js";

type MessageBoxOptions = Parameters<UpdatePrompts["ask"]>[0];

class StandInUpdater extends EventEmitter implements Updater {
    autoDownload = true; // electron-updater's defaults
    autoInstallOnAppQuit = false;
    readonly calls: string[] = [];
    constructor(
        private readonly latest: string | null,
        private readonly failure?: { readonly on: "check" | "download"; readonly message: string }
    ) {
        super();
    }
    async checkForUpdates() {
        this.calls.push("check");
        if (this.failure?.on === "check") {
            throw new Error(this.failure.message);
        }
        return this.latest === null ? null : { isUpdateAvailable: this.latest !== "0.1.0", updateInfo: { version: this.latest } };
    }
    async downloadUpdate() {
        this.calls.push("download");
        this.emit("download-progress", { percent: 50 });
        if (this.failure?.on === "download") {
            throw new Error(this.failure.message);
        }
        this.emit("download-progress", { percent: 100 });
        return [];
    }
    quitAndInstall() {
        this.calls.push("quitAndInstall");
    }
}

function flow(updater: StandInUpdater | undefined, answers: number[], options: Partial<UpdateFlowOptions> = {}) {
    const asked: MessageBoxOptions[] = [];
    const progress: (number | null)[] = [];
    let numReleasePages = 0;
    let numLoads = 0;
    const update = new UpdateFlow(
        async () => {
            numLoads++;
            return updater!;
        },
        {
            ask: async (box) => (asked.push(box), answers.shift() ?? 0),
            progress: (fraction) => void progress.push(fraction),
            openReleases: () => void numReleasePages++
        },
        { currentVersion: "0.1.0", platform: "linux", packaged: true, log: () => undefined, ...options }
    );
    return { update, asked, progress, releasePages: () => numReleasePages, loads: () => numLoads };
}

describe("UpdateFlow", () => {
    it("asks before downloading, then asks to restart: yes, yes installs now", async () => {
        const updater = new StandInUpdater("0.2.0");
        const { update, asked, progress } = flow(updater, [0, 0]);
        expect(await update.checkNow()).toBe("installing");
        expect(updater).toMatchObject({ autoDownload: false, autoInstallOnAppQuit: true });
        expect(updater.calls).toEqual(["check", "download", "quitAndInstall"]);
        expect(asked.map((box) => box.message)).toEqual([
            "Kvault 0.2.0 is available (you have 0.1.0).",
            "Kvault 0.2.0 is ready to install."
        ]);
        expect(asked[0]!.buttons).toEqual(["Download", "Not Now"]);
        expect(progress).toEqual([0.5, 1, null]);
    });

    it("downloads nothing when the user says not now, and installs at quit when they say later", async () => {
        const declined = new StandInUpdater("0.2.0");
        expect(await flow(declined, [1]).update.checkNow()).toBe("declined");
        expect(declined.calls).toEqual(["check"]);

        const later = new StandInUpdater("0.2.0");
        expect(await flow(later, [0, 1]).update.checkNow()).toBe("install-on-quit");
        expect(later.calls).toEqual(["check", "download"]);
        expect(later.autoInstallOnAppQuit).toBe(true);
    });

    it("says so when there is nothing newer", async () => {
        const { update, asked } = flow(new StandInUpdater("0.1.0"), []);
        expect(await update.checkNow()).toBe("up-to-date");
        expect(asked[0]!.message).toBe("Kvault 0.1.0 is up to date.");
    });

    it("on macOS offers the releases page instead: an ad-hoc signed app cannot install updates", async () => {
        const { update, asked, releasePages, loads } = flow(undefined, [0], { platform: "darwin" });
        expect(await update.checkNow()).toBe("manual");
        expect(asked[0]!.detail).toMatch(/macOS installs updates only for signed apps/);
        expect(releasePages()).toBe(1);
        expect(loads()).toBe(0);
    });

    it("offers the releases page where the updater is inactive, and checks nothing in a development run", async () => {
        const inactive = flow(new StandInUpdater(null), [1]);
        expect(await inactive.update.checkNow()).toBe("manual");
        expect(inactive.releasePages()).toBe(0);

        const development = flow(undefined, [], { packaged: false });
        expect(await development.update.checkNow()).toBe("development");
        expect(development.loads()).toBe(0);
    });

    it("reports a failed check or download with the reason and what to do, and clears the progress", async () => {
        const offline = flow(new StandInUpdater("0.2.0", { on: "check", message: "net::ERR_INTERNET_DISCONNECTED" }), []);
        expect(await offline.update.checkNow()).toBe("failed");
        expect(offline.asked[0]).toMatchObject({ type: "warning", message: "Kvault could not check for updates." });
        expect(offline.asked[0]!.detail).toMatch(/^net::ERR_INTERNET_DISCONNECTED\n\nCheck your connection/);

        const cut = flow(new StandInUpdater("0.2.0", { on: "download", message: "sha512 checksum mismatch" }), [0]);
        expect(await cut.update.checkNow()).toBe("failed");
        expect(cut.asked[1]!.message).toBe("Kvault 0.2.0 could not be downloaded.");
        expect(cut.progress.at(-1)).toBeNull();
    });

    it("runs one check at a time", async () => {
        const { update } = flow(new StandInUpdater("0.1.0"), []);
        const first = update.checkNow();
        expect(await update.checkNow()).toBe("busy");
        expect(await first).toBe("up-to-date");
    });
});
