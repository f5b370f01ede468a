/**
 * The `kvault` command's exit codes, the same for every subcommand, so that a script can tell a
 * server that is not there from one that refused from a usage mistake. A launched tool's own exit
 * code passes through unchanged.
 */
export const exitCodes = Object.freeze({
    ok: 0,
    /** The server answered with an error, or the work failed (a download, a probe). */
    failed: 1,
    /** The command line was wrong: an unknown command or option, a missing argument. */
    usage: 2,
    /** No Kvault answered at the URL. */
    unreachable: 3,
    /** Kvault refused what was asked: a key it does not take, a model whose window is too small for the tool. */
    refused: 4,
    /** Interrupted by the user (Ctrl-C), as shells count SIGINT. */
    interrupted: 130
});

export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];
