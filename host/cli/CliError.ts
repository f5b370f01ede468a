import { KvaultError } from "../../engine/index.js";
import { exitCodes, type ExitCode } from "./exitCodes.js";

/** A failure the `kvault` command reports in one line on stderr and ends with its exit code. */
export class CliError extends KvaultError {
    constructor(
        message: string,
        readonly code: string,
        readonly exitCode: ExitCode = exitCodes.failed
    ) {
        super(message);
    }
}
