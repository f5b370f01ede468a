// Windows' x64 and arm64 builds each write a latest.yml; the release carries one listing both.
import { describe, expect, it } from "vitest";
import { UpdateInfoMergeError, mergeUpdateInfo } from "../../../../main/updates/mergeUpdateInfo.js";

/** As electron-builder writes it for one NSIS build. */
const build = (arch: string, version = "0.2.0"): string =>
    [
        `version: ${version}`,
        "files:",
        `  - url: Kvault-${version}-win-${arch}.exe`,
        `    sha512: sha-${arch}==`,
        `    size: ${arch === "x64" ? 123 : 456}`,
        `path: Kvault-${version}-win-${arch}.exe`,
        `sha512: sha-${arch}==`,
        "releaseDate: '2026-12-01T10:00:00.000Z'",
        ""
    ].join("\n");

describe("mergeUpdateInfo", () => {
    it("lists every build's installer, keeping the first build's top-level fields", () => {
        expect(mergeUpdateInfo("latest.yml", [build("x64"), build("arm64")])).toBe(
            [
                "version: 0.2.0",
                "files:",
                "  - url: Kvault-0.2.0-win-x64.exe",
                "    sha512: sha-x64==",
                "    size: 123",
                "  - url: Kvault-0.2.0-win-arm64.exe",
                "    sha512: sha-arm64==",
                "    size: 456",
                "path: Kvault-0.2.0-win-x64.exe",
                "sha512: sha-x64==",
                "releaseDate: '2026-12-01T10:00:00.000Z'",
                ""
            ].join("\n")
        );
    });

    it("leaves a single build's file as it was, and lists a file twice only once", () => {
        expect(mergeUpdateInfo("latest.yml", [build("x64")])).toBe(build("x64"));
        expect(mergeUpdateInfo("latest.yml", [build("x64"), build("x64")])).toBe(build("x64"));
    });

    it("refuses builds of different versions, and files that are not update info", () => {
        expect(() => mergeUpdateInfo("latest.yml", [build("x64", "0.2.0"), build("arm64", "0.2.1")])).toThrow(
            /different versions \(0\.2\.0, 0\.2\.1\)/
        );
        expect(() => mergeUpdateInfo("latest.yml", ["version: 1\n"])).toThrow(UpdateInfoMergeError);
        expect(() => mergeUpdateInfo("latest.yml", ["files:\n  - url: a.exe\n"])).toThrow(/has no version/);
        expect(() => mergeUpdateInfo("latest.yml", [])).toThrow(/nothing to merge/);
    });
});
