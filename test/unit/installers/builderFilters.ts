// electron-builder's own file filters for one build target, so that tests can ask what it would
// pack and unpack without an Electron binary. These are app-builder-lib's internal functions
// (electron-builder 26.17.0 pins app-builder-lib 26.17.0): a test that breaks on an upgrade is
// the point, since a different matching rule would change what the installers carry.
import { createRequire } from "node:module";
import path from "node:path";
import type { Configuration, PlatformSpecificBuildOptions } from "electron-builder";

/** The file name and stat electron-builder's walkers pass to a filter. */
type Filter = (file: string, stat: { isDirectory(): boolean; moduleFullFilePath?: string }) => boolean;
interface FileMatcher {
    readonly patterns: readonly string[];
    createFilter(): Filter;
}
interface DebugLogger {
    readonly isEnabled: boolean;
    add(key: string, value: unknown): void;
}
interface Packager {
    readonly projectDir: string;
    readonly buildResourcesDir: string;
    readonly isPrepackedAppAsar: boolean;
    readonly config: Configuration;
    readonly debugLogger: DebugLogger;
}
type MacroExpander = (pattern: string) => string;

const require = createRequire(import.meta.url);
const fileMatcher = require("app-builder-lib/out/fileMatcher") as {
    getMainFileMatchers(
        appDir: string,
        destination: string,
        expand: MacroExpander,
        options: PlatformSpecificBuildOptions,
        platformPackager: { info: Packager },
        outDir: string,
        isElectronCompile: boolean
    ): FileMatcher[];
    getNodeModuleFileMatcher(
        appDir: string,
        destination: string,
        expand: MacroExpander,
        options: PlatformSpecificBuildOptions,
        packager: Packager
    ): FileMatcher;
    getFileMatchers(
        config: Configuration,
        name: "asarUnpack",
        destination: string,
        options: {
            macroExpander: MacroExpander;
            customBuildOptions: PlatformSpecificBuildOptions;
            globalOutDir: string;
            defaultSrc: string;
        }
    ): FileMatcher[] | null;
};
const { expandMacro } = require("app-builder-lib/out/util/macroExpander") as {
    expandMacro(pattern: string, arch: string | null, appInfo: object, extra: Record<string, string>): string;
};
const { getConfig, validateConfiguration } = require("app-builder-lib/out/util/config/config") as {
    getConfig(projectDir: string, configPath: string, configFromOptions: null): Promise<Configuration>;
    validateConfiguration(config: Configuration, debugLogger: DebugLogger): Promise<void>;
};

const quietLogger: DebugLogger = { isEnabled: false, add: () => undefined };

/**
 * The configuration as `electron-builder --config FILE` sees it: loaded the same way, then
 * normalized (`files` becomes file sets, which decides how node_modules/ patterns apply).
 */
export function loadBuilderConfig(projectDir: string, file: string): Promise<Configuration> {
    return getConfig(projectDir, file, null);
}

/** electron-builder's schema check, the one it runs before it downloads anything; throws on a bad key. */
export function validateBuilderConfig(config: Configuration): Promise<void> {
    return validateConfiguration(config, quietLogger);
}

/** electron-builder's names: `${os}` expands to the platform's configuration key. */
export type BuilderPlatform = "linux" | "win" | "mac";

export interface BuilderFilters {
    /** Whether the app would carry this file (a path relative to the project, with `/`). */
    packs(file: string): boolean;
    /** Whether the asar would leave this file outside, in app.asar.unpacked. */
    unpacks(file: string): boolean;
}

/**
 * The filters of one build of a loaded configuration (loadBuilderConfig), as electron-builder
 * derives them in PlatformPackager.copyAppFiles: `files` for the app's own files (that walker
 * never enters the root node_modules), `files` again, behind a pattern that takes everything,
 * for the production dependencies, and `asarUnpack`; with `${os}` and `${arch}` expanded.
 */
export function builderFilters(config: Configuration, platform: BuilderPlatform, arch: string, projectDir: string): BuilderFilters {
    const options: PlatformSpecificBuildOptions = config[platform] ?? {};
    const appInfo = { productName: config.productName, sanitizedProductName: config.productName };
    // PlatformPackager.createGetFileMatchersOptions: the same extras, `${/*}` included.
    const expand: MacroExpander = (pattern) => expandMacro(pattern, arch, appInfo, { os: platform, "/*": "{,/**/*}" });
    const packager: Packager = {
        projectDir,
        buildResourcesDir: config.directories?.buildResources ?? "build",
        isPrepackedAppAsar: false,
        config,
        debugLogger: quietLogger
    };
    const outDir = path.join(projectDir, config.directories?.output ?? "dist");
    const [appFiles] = fileMatcher.getMainFileMatchers(projectDir, projectDir, expand, options, { info: packager }, outDir, false);
    const nodeModules = fileMatcher.getNodeModuleFileMatcher(projectDir, projectDir, expand, options, packager);
    const unpack = fileMatcher.getFileMatchers(config, "asarUnpack", projectDir, {
        macroExpander: expand,
        customBuildOptions: options,
        globalOutDir: outDir,
        defaultSrc: projectDir
    })?.[0];
    if (appFiles === undefined) {
        throw new Error("electron-builder derived no file matcher from `files`.");
    }
    const appFilter = appFiles.createFilter();
    const nodeModulesFilter = nodeModules.createFilter();
    const unpackFilter = unpack?.createFilter();
    const isFile = (relative: string) => ({ isDirectory: () => false, moduleFullFilePath: relative });
    return {
        packs: (file) =>
            file.startsWith("node_modules/")
                ? nodeModulesFilter(path.join(projectDir, file), isFile(file))
                : appFilter(path.join(projectDir, file), { isDirectory: () => false }),
        unpacks: (file) => unpackFilter?.(path.join(projectDir, file), isFile(file)) ?? false
    };
}
