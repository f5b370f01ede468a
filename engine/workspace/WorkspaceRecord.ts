import type { WorkspaceId } from "../core/ids.js";
import type { PageManifest } from "../handoff/PageManifest.js";
import type { Reservation } from "../pages/Reservation.js";
import type { SequenceSlot } from "../runtime/SequenceSlot.js";

/** Where a workspace's KV is between turns. */
export type WorkspaceResidency =
    | { readonly kind: "none" }
    /** In a decode sequence; its tokens are the sequence's. */
    | { readonly kind: "resident"; readonly slot: SequenceSlot }
    /** Swapped out into sealed pages, to be verified and loaded on its next turn. */
    | { readonly kind: "swapped"; readonly reservation: Reservation; readonly manifest: PageManifest };

/** The engine's memory of one workspace: where its KV is, and whether a turn is running. */
export class WorkspaceRecord {
    residency: WorkspaceResidency = { kind: "none" };
    busy = false;
    /** Engine clock of the last turn's end, for least-recently-used swapping. */
    lastUsed = 0;
    numSwapOuts = 0;
    numSwapIns = 0;

    constructor(readonly id: WorkspaceId) {}

    /** Tokens whose KV the engine holds for this workspace. */
    get heldTokens(): readonly number[] {
        switch (this.residency.kind) {
            case "none":
                return [];
            case "resident":
                return this.residency.slot.tokens;
            case "swapped":
                return this.residency.manifest.tokens;
        }
    }
}
