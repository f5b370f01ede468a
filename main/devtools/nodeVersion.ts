/**
 * The oldest Node.js Kvault's toolchain supports: electron 45 and its tooling (@electron/get,
 * @electron/rebuild, node-abi) declare `>=22.12.0` in their package.json `engines`, so on an
 * older Node `npm ci` warns EBADENGINE for each and packaging is unsupported. package.json's
 * `engines` says the same; a unit test keeps the two equal.
 */
export const MIN_NODE_VERSION = "22.12.0";

/** Undefined when `version` (e.g. process.versions.node, "22.22.0") is new enough; else a line saying so and what to do. */
export function checkNodeVersion(version: string, minimum: string = MIN_NODE_VERSION): string | undefined {
    if (compareVersions(version, minimum) >= 0) {
        return undefined;
    }
    return (
        `Node.js ${version} is older than the ${minimum} Kvault's Electron tooling needs (electron, @electron/get, @electron/rebuild). ` +
        `Install Node.js ${minimum.split(".")[0]} (${minimum} or newer) to build installers and to keep npm ci free of EBADENGINE warnings.`
    );
}

/** Compares dotted numeric versions ("22.12.0" vs "20.20.2"); a missing or non-numeric part counts as 0. */
export function compareVersions(a: string, b: string): number {
    const parts = (version: string): number[] =>
        version
            .replace(/^v/, "")
            .split(/[.+-]/, 3)
            .map((part) => Number.parseInt(part, 10) || 0);
    const [left, right] = [parts(a), parts(b)];
    for (let index = 0; index < 3; index++) {
        const difference = (left[index] ?? 0) - (right[index] ?? 0);
        if (difference !== 0) {
            return Math.sign(difference);
        }
    }
    return 0;
}
