// Pure on purpose (node:fs and node:path only, no electron): what `npm start` checks before it
// hands over to electron-vite, so that a machine without Electron's binary gets one message that
// says what is missing and what to do, instead of a stack trace from deep inside the dev server.
import fs from "node:fs";
import path from "node:path";

/**
 * Where the electron package keeps its binary, as its own index.js finds it: `path.txt` names the
 * executable inside `dist/` (`electron`, `electron.exe`, `Electron.app/Contents/MacOS/Electron`),
 * or ELECTRON_OVERRIDE_DIST_PATH replaces `dist/`.
 */
export type ElectronBinaryStatus =
    | { readonly kind: "present"; readonly executable: string }
    | { readonly kind: "missing"; readonly expected: string; readonly why: string };

export function electronBinaryStatus(
    electronPackageDir: string,
    env: Readonly<Record<string, string | undefined>> = process.env
): ElectronBinaryStatus {
    const pathFile = path.join(electronPackageDir, "path.txt");
    if (!fs.existsSync(path.join(electronPackageDir, "package.json"))) {
        return { kind: "missing", expected: electronPackageDir, why: "the electron package is not installed (run `npm ci` first)" };
    }
    let relative: string | undefined;
    try {
        relative = fs.readFileSync(pathFile, "utf8").trim();
    } catch {
        relative = undefined;
    }
    const override = env.ELECTRON_OVERRIDE_DIST_PATH;
    if (override !== undefined && override !== "") {
        const executable = path.join(override, relative === undefined || relative === "" ? "electron" : relative);
        return fs.existsSync(executable)
            ? { kind: "present", executable }
            : { kind: "missing", expected: executable, why: "ELECTRON_OVERRIDE_DIST_PATH names a folder without Electron in it" };
    }
    if (relative === undefined || relative === "") {
        return {
            kind: "missing",
            expected: path.join(electronPackageDir, "dist"),
            why: "its binary was never downloaded (node_modules/electron/path.txt is missing)"
        };
    }
    const executable = path.join(electronPackageDir, "dist", relative);
    return fs.existsSync(executable)
        ? { kind: "present", executable }
        : {
              kind: "missing",
              expected: executable,
              why: "its binary is not where the electron package put it (deleted, or the download was cut short)"
          };
}

export interface EnsureElectronOptions {
    readonly electronPackageDir: string;
    /**
     * Fetches the binary as the electron package itself would (its install.js, which downloads from
     * GitHub's releases or ELECTRON_MIRROR); true when it succeeded. Tried once, only when missing.
     */
    readonly download: () => boolean;
    readonly env?: Readonly<Record<string, string | undefined>>;
}

export type EnsureElectronResult = { readonly ok: true; readonly executable: string } | { readonly ok: false; readonly message: string };

/**
 * Electron's binary, downloaded once if it is missing. When it is still missing, `message` says
 * what is missing and the two ways on: fetch it, or run Kvault in a browser without Electron.
 */
export function ensureElectronBinary(options: EnsureElectronOptions): EnsureElectronResult {
    const env = options.env ?? process.env;
    const first = electronBinaryStatus(options.electronPackageDir, env);
    if (first.kind === "present") {
        return { ok: true, executable: first.executable };
    }
    const downloaded = options.download();
    const second = electronBinaryStatus(options.electronPackageDir, env);
    if (downloaded && second.kind === "present") {
        return { ok: true, executable: second.executable };
    }
    return { ok: false, message: missingElectronMessage(second.kind === "missing" ? second : first) };
}

export function missingElectronMessage(missing: Extract<ElectronBinaryStatus, { kind: "missing" }>): string {
    return [
        `Kvault cannot start the desktop app: Electron's binary is missing (${missing.expected}): ${missing.why}.`,
        "npm installs the electron package, but the binary itself (about 100 MB) is downloaded from GitHub separately,",
        "and that download did not happen or failed (offline, or github.com unreachable).",
        "",
        "To fix it, either:",
        "  npx electron --version   fetches the binary (needs github.com, or set ELECTRON_MIRROR to a mirror), then run npm start again",
        "  npm run serve            runs Kvault without Electron, in your browser (http://127.0.0.1:8080)"
    ].join("\n");
}
