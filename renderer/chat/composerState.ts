import type { ConnectionStatus } from "../rpc/KvaultRpc.js";
import type { MeterReading } from "../meter/meterReading.js";

export interface ComposerState {
    readonly canSend: boolean;
    /** Why Send is off, when there is something to say (an empty draft needs no words). */
    readonly reason: string | undefined;
}

/**
 * Whether the draft can be sent now. `reading` is the meter's latest; `fresh` when it measured
 * exactly this draft and conversation. A stale reading that blocked keeps blocking until the new
 * one comes (the draft was still too long a moment ago); a stale one that fit lets the engine
 * judge at the door.
 */
export function composerState(input: {
    readonly draft: string;
    readonly connection: ConnectionStatus;
    readonly running: boolean;
    readonly reading: MeterReading | undefined;
    readonly fresh: boolean;
}): ComposerState {
    const { draft, connection, running, reading, fresh } = input;
    if (connection.kind === "unavailable") {
        return { canSend: false, reason: connection.reason };
    }
    if (connection.kind !== "open") {
        return { canSend: false, reason: "Not connected to the Kvault server; it reconnects by itself." };
    }
    if (running) {
        // Stop stands where Send was; nothing else to say
        return { canSend: false, reason: undefined };
    }
    if (draft.trim() === "") {
        return { canSend: false, reason: undefined };
    }
    if (reading?.blockedBecause !== undefined) {
        return { canSend: false, reason: fresh ? reading.blockedBecause : `${reading.blockedBecause} (Measuring the new text…)` };
    }
    return { canSend: true, reason: undefined };
}
