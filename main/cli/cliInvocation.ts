/**
 * The words that make a launch of the desktop app's binary a `kvault` command instead of the app:
 * on Linux the deb puts that binary on the PATH as `kvault` (electron-builder's executableName),
 * so `kvault ls` in a terminal starts it with these arguments.
 */
export const cliCommandWords = ["run", "ls", "ps", "pull", "launch", "probe", "serve", "help"] as const;

/**
 * The command's arguments when this launch is one, else undefined. A packaged app's argv is
 * `[binary, ...args]`; in development Electron runs `electron <app dir> ...args`. Electron's and
 * Chromium's own switches (`--no-sandbox`, `--enable-logging`) never name a command.
 */
export function cliInvocation(argv: readonly string[], isPackaged: boolean): string[] | undefined {
    const args = argv.slice(isPackaged ? 1 : 2);
    const first = args[0];
    return first !== undefined && (cliCommandWords as readonly string[]).includes(first) ? [...args] : undefined;
}
