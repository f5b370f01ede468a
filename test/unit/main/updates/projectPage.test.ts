import { describe, expect, it } from "vitest";
import { projectPageFromAppUpdate } from "../../../../main/updates/projectPage.js";

describe("projectPageFromAppUpdate", () => {
    it("reads the GitHub repository electron-builder wrote into app-update.yml", () => {
        const written = "owner: kvault-org\nrepo: kvault\nprovider: github\nreleaseType: release\nupdaterCacheDirName: kvault-updater\n";
        expect(projectPageFromAppUpdate(written)).toBe("https://github.com/kvault-org/kvault");
        expect(projectPageFromAppUpdate("provider: 'github'\r\nowner: \"a\"\r\nrepo: b\r\n")).toBe("https://github.com/a/b");
    });

    it("is undefined for another provider, a missing field, or a name that is not one", () => {
        expect(projectPageFromAppUpdate("provider: generic\nurl: https://example.com\n")).toBeUndefined();
        expect(projectPageFromAppUpdate("provider: github\nowner: a\n")).toBeUndefined();
        expect(projectPageFromAppUpdate("provider: github\nowner: a/../../evil\nrepo: b\n")).toBeUndefined();
        expect(projectPageFromAppUpdate("")).toBeUndefined();
    });
});
