// npm start's pre-start check on real folders laid out as the electron package lays itself out:
// with the binary, without it (never downloaded, or deleted), and with a download that fails as
// it does offline.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { electronBinaryStatus, ensureElectronBinary } from "../../../../main/devtools/electronBinary.js";

const root = path.resolve(import.meta.dirname, "../../../..");
const made: string[] = [];

/** An electron package folder: package.json always, path.txt and the executable when asked. */
function electronPackage(layout: { readonly pathTxt?: string; readonly executable?: boolean }): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-electron-"));
    made.push(dir);
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "electron", version: "45.5.0" }));
    if (layout.pathTxt !== undefined) {
        fs.writeFileSync(path.join(dir, "path.txt"), layout.pathTxt);
    }
    if (layout.executable === true) {
        fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
        fs.writeFileSync(path.join(dir, "dist", layout.pathTxt ?? "electron"), "#!/bin/sh\n");
    }
    return dir;
}

/** What the electron package's install.js does when it succeeds: dist/ and path.txt. */
function installInto(dir: string): boolean {
    fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
    fs.writeFileSync(path.join(dir, "dist", "electron"), "#!/bin/sh\n");
    fs.writeFileSync(path.join(dir, "path.txt"), "electron");
    return true;
}

afterEach(() => {
    for (const dir of made.splice(0)) {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

describe("electronBinaryStatus", () => {
    it("finds the executable path.txt names inside dist/", () => {
        const dir = electronPackage({ pathTxt: "electron", executable: true });
        expect(electronBinaryStatus(dir, {})).toEqual({ kind: "present", executable: path.join(dir, "dist", "electron") });
    });

    it("says the binary was never downloaded when path.txt is missing", () => {
        const dir = electronPackage({});
        expect(electronBinaryStatus(dir, {})).toMatchObject({ kind: "missing", why: expect.stringContaining("never downloaded") });
    });

    it("says the binary is gone when path.txt names a file that is not there", () => {
        const dir = electronPackage({ pathTxt: "electron" });
        expect(electronBinaryStatus(dir, {})).toMatchObject({ kind: "missing", expected: path.join(dir, "dist", "electron") });
    });

    it("follows ELECTRON_OVERRIDE_DIST_PATH, as the electron package does", () => {
        const dir = electronPackage({ pathTxt: "electron" });
        const other = electronPackage({ pathTxt: "electron", executable: true });
        expect(electronBinaryStatus(dir, { ELECTRON_OVERRIDE_DIST_PATH: path.join(other, "dist") })).toEqual({
            kind: "present",
            executable: path.join(other, "dist", "electron")
        });
        expect(electronBinaryStatus(other, { ELECTRON_OVERRIDE_DIST_PATH: dir })).toMatchObject({ kind: "missing" });
    });

    it("says to run npm ci when the electron package itself is missing", () => {
        expect(electronBinaryStatus(path.join(os.tmpdir(), "kvault-no-such-electron"), {})).toMatchObject({
            kind: "missing",
            why: expect.stringContaining("npm ci")
        });
    });
});

describe("ensureElectronBinary", () => {
    it("does not download when the binary is there", () => {
        const dir = electronPackage({ pathTxt: "electron", executable: true });
        let numDownloads = 0;
        expect(ensureElectronBinary({ electronPackageDir: dir, env: {}, download: () => ++numDownloads > 0 })).toMatchObject({ ok: true });
        expect(numDownloads).toBe(0);
    });

    it("downloads once when it is missing, then goes on", () => {
        const dir = electronPackage({});
        let numDownloads = 0;
        const result = ensureElectronBinary({ electronPackageDir: dir, env: {}, download: () => (numDownloads++, installInto(dir)) });
        expect(result).toEqual({ ok: true, executable: path.join(dir, "dist", "electron") });
        expect(numDownloads).toBe(1);
    });

    it("offline, ends with what is missing and both ways on: npx electron --version, or npm run serve", () => {
        const dir = electronPackage({ pathTxt: "electron" });
        const result = ensureElectronBinary({ electronPackageDir: dir, env: {}, download: () => false });
        expect(result.ok).toBe(false);
        const { message } = result as { message: string };
        expect(message).toContain(`Electron's binary is missing (${path.join(dir, "dist", "electron")})`);
        expect(message).toContain("npx electron --version");
        expect(message).toContain("npm run serve");
    });

    it("a download that claims success but leaves no binary is still a failure", () => {
        const dir = electronPackage({});
        expect(ensureElectronBinary({ electronPackageDir: dir, env: {}, download: () => true })).toMatchObject({ ok: false });
    });
});

describe("npm start", () => {
    it("runs the check first (npm's prestart)", () => {
        const { scripts } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
        expect(scripts.prestart).toBe("node --import tsx main/devtools/preStart.ts");
        expect(fs.existsSync(path.join(root, "main/devtools/preStart.ts"))).toBe(true);
    });
});
