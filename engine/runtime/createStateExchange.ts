import type { Llama } from "node-llama-cpp";
import { inMemoryStateUnsupported } from "./addonPatch/sequenceStateInMemory.js";
import { FileStateExchange } from "./FileStateExchange.js";
import { MemoryStateExchange } from "./MemoryStateExchange.js";
import type { PrivateStateDirectory } from "./PrivateStateDirectory.js";
import type { StateExchange } from "./StateExchange.js";

/** Which way states go, and why, in words. */
export interface StateExchangeChoice {
    readonly kind: StateExchange["kind"];
    readonly reason: string;
}

/** The path the engine's `stateExchange` setting and the loaded binary allow: memory when both do. */
export function chooseStateExchange(setting: "auto" | "file", llama: Llama): StateExchangeChoice {
    if (setting === "file") {
        return { kind: "file", reason: 'stateExchange is "file"' };
    }
    const unsupported = inMemoryStateUnsupported(llama);
    return unsupported === undefined
        ? { kind: "memory", reason: "the binary carries Kvault's in-memory state patch" }
        : { kind: "file", reason: unsupported };
}

/** A context's own exchange (each keeps the spare buffer its own states fit). */
export function createStateExchange(choice: StateExchangeChoice, directory: PrivateStateDirectory): StateExchange {
    return choice.kind === "memory" ? new MemoryStateExchange() : new FileStateExchange(directory);
}
