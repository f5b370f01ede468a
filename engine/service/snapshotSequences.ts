import type { SequenceUsage } from "../../contract/EngineSnapshot.js";
import { invariant } from "../core/invariant.js";
import type { KvEngine } from "../KvEngine.js";

/**
 * Every sequence of the engine's contexts as the page map draws it: the prefill sequence (with the
 * workspace whose handoff holds it), then each decode sequence with the workspace resident in it.
 * A sequence's positions are `[0, numTokens)`, in `ceil(numTokens / pageTokens)` page-sized blocks.
 */
export function snapshotSequences(engine: KvEngine): SequenceUsage[] {
    const pageTokens = engine.pool.config.pageTokens;
    const sequences: SequenceUsage[] = [];
    const usage = (
        role: SequenceUsage["role"],
        index: number,
        capacity: number,
        numTokens: number,
        workspace: string | undefined,
        running: boolean
    ): SequenceUsage => {
        invariant(
            Number.isSafeInteger(numTokens) && numTokens >= 0 && numTokens <= capacity,
            () => `${role} sequence ${index} holds ${numTokens} positions of its ${capacity}`
        );
        return {
            role,
            index,
            capacity,
            numTokens,
            numBlocks: Math.ceil(numTokens / pageTokens),
            ...(workspace === undefined ? {} : { workspace }),
            running
        };
    };
    const { prefill } = engine;
    for (let index = 0; prefill !== undefined && index < prefill.numSequences; index++) {
        const holder = engine.prefillHolder(index);
        sequences.push(
            usage("prefill", index, prefill.sequenceCapacity, holder?.slot.numTokens ?? 0, holder?.workspace, holder !== undefined)
        );
    }
    const resident = new Map<number, { workspace: string; numTokens: number; running: boolean }>();
    for (const workspace of engine.workspaces()) {
        if (workspace.residency.kind === "resident") {
            const index = workspace.residency.slot.index;
            invariant(
                !resident.has(index),
                () => `decode sequence ${index} is resident for both ${resident.get(index)?.workspace} and ${workspace.id}`
            );
            resident.set(index, { workspace: workspace.id, numTokens: workspace.residency.slot.numTokens, running: workspace.busy });
        }
    }
    const decode = engine.decode;
    for (let index = 0; index < decode.numSequences; index++) {
        const held = resident.get(index);
        sequences.push(usage(decode.role, index, decode.sequenceCapacity, held?.numTokens ?? 0, held?.workspace, held?.running ?? false));
    }
    return sequences;
}
