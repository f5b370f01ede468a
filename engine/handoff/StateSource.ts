import type { StateTarget } from "../codec/statePages.js";
import type { ExportedState, RoleContext } from "../runtime/RoleContext.js";
import type { SequenceSlot } from "../runtime/SequenceSlot.js";

/**
 * Where a transfer's state comes from (`PageTransfer.writeFrom`): a sequence of a context, saved by
 * llama.cpp straight into the pages where the context can, else exported whole and copied in.
 */
export interface StateSource {
    /** Positions the sequence holds: the length of its state. */
    readonly numTokens: number;
    /** The source context's stream count, which sizes the state's metadata; undefined when not a plain KV cache. */
    readonly numStreams: number | undefined;
    /** Saves the state as `target` plans it; false, nothing written, when it is not the size planned. Absent where the context cannot. */
    readonly saveInto?: (target: StateTarget) => Promise<boolean>;
    /** The state, whole, parsed: for transfers that copy it into the pages themselves. */
    exportWhole(): Promise<ExportedState>;
}

/** The state of `slot` in `context`; `label` names a state file for the instant one exists. */
export function sequenceStateSource(context: RoleContext, slot: SequenceSlot, label: string): StateSource {
    const saveStateInto = context.saveStateInto;
    return {
        numTokens: slot.numTokens,
        numStreams: context.numStreams,
        ...(saveStateInto === undefined ? {} : { saveInto: (target: StateTarget) => saveStateInto(slot, target) }),
        exportWhole: () => context.exportState(slot, label)
    };
}

/** A state exported already, as a source: written by copying it into the pages; `release` gives its memory back (idempotent). */
export interface ExportedStateSource extends StateSource {
    readonly release: () => void;
}

export function exportedStateSource(state: ExportedState): ExportedStateSource {
    return {
        numTokens: state.tokens.length,
        numStreams: state.numStreams,
        exportWhole: () => Promise.resolve(state),
        release: state.release
    };
}
