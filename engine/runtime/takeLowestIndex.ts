/**
 * Removes and returns the item of the lowest `index` (undefined when there is none). Contexts give
 * out their free sequences this way, so that sequences at work together tend to have consecutive
 * ids, which llama.cpp computes as one graph (see orderDecodesBySequence).
 */
export function takeLowestIndex<T extends { readonly index: number }>(items: T[]): T | undefined {
    if (items.length === 0) {
        return undefined;
    }
    let lowest = 0;
    for (let i = 1; i < items.length; i++) {
        if (items[i]!.index < items[lowest]!.index) {
            lowest = i;
        }
    }
    return items.splice(lowest, 1)[0];
}
