import { KvaultError } from "../core/KvaultError.js";

const formatBytes = (count: number): string => count.toLocaleString("en-US");

/** When a state file could not be written: while the engine started (it does not start), or for a request (which fails alone). */
export type StateWriteStage = "start" | "request";

/**
 * The private state directory, or the root it is made in, cannot be written: gone, replaced by
 * something that is not a directory, on a read-only file system, or refused. Permission bits alone
 * do not stop root; each of these does.
 */
export class StateDirectoryUnwritableError extends KvaultError {
    readonly code = "state_directory_unwritable";

    constructor(
        readonly directory: string,
        /** What is wrong with it, in words, with the system's error code. */
        readonly why: string,
        readonly stage: StateWriteStage,
        /** Bytes of the state that could not be written, when known. */
        readonly numBytesNeeded: number | undefined,
        cause?: unknown
    ) {
        super(
            stage === "start"
                ? `Kvault cannot write KV state files in ${directory}: ${why}. The engine keeps a sequence's KV there for an instant during every handoff, ` +
                      `so it cannot start. Make ${directory} a writable directory (or point the engine's stateRoot at one), then start it again.`
                : `This request's KV state${numBytesNeeded === undefined ? "" : ` (${formatBytes(numBytesNeeded)} bytes)`} could not be written to the private state directory ` +
                      `${directory}: ${why}. Nothing was generated and its pages were released. Make the directory writable again (or restart the engine, ` +
                      "which makes a new one), then send the message again.",
            { cause }
        );
    }
}

/** The state directory's file system has no room for a state file (ENOSPC, a quota, or a size limit). */
export class StateDirectoryFullError extends KvaultError {
    readonly code = "state_directory_full";

    constructor(
        readonly directory: string,
        readonly stage: StateWriteStage,
        /** Bytes the state needs on that file system (whole blocks), when known. */
        readonly numBytesNeeded: number | undefined,
        readonly numBytesFree: number,
        cause?: unknown
    ) {
        super(
            `The file system of the KV state directory ${directory} is full: ` +
                (numBytesNeeded === undefined
                    ? ""
                    : `${stage === "start" ? "the start-up probe's" : "this request's"} KV state needs ${formatBytes(numBytesNeeded)} bytes and `) +
                `${formatBytes(numBytesFree)} bytes are free. ` +
                (stage === "start" ? "The engine could not start. " : "Nothing was generated and its pages were released. ") +
                `Free space there${directory.startsWith("/dev/shm/") ? " (files in /dev/shm take memory)" : ""}, then ` +
                (stage === "start" ? "start the engine again." : "send the message again."),
            { cause }
        );
    }
}
