// The schema that stalled every workspace: $defs L0 a string, and L1…L{levels} each a oneOf
// of `numBranches` arrays of the level below that differ only in maxItems, so every branch accepts
// the same text and a grammar keeps numBranches^levels alternatives open through `[[[…`.

/**
 * The repro schema: `levels` nested oneOfs of `numBranches` alike arrays (the issue's: 6 levels of
 * 8, 3 KB) over `leaf` (a string; one with a minLength, under arrays of `minItems`, keeps every
 * alternative open for longer).
 */
export function ambiguousSchema(
    levels = 6,
    numBranches = 8,
    leaf: Record<string, unknown> = { type: "string" },
    minItems = 0
): Record<string, unknown> {
    const defs: Record<string, unknown> = { L0: leaf };
    for (let level = 1; level <= levels; level++) {
        defs[`L${level}`] = {
            oneOf: Array.from({ length: numBranches }, (_, branch) => ({
                type: "array",
                items: { $ref: `#/$defs/L${level - 1}` },
                maxItems: branch + 2,
                ...(minItems > 0 ? { minItems } : {})
            }))
        };
    }
    return { $defs: defs, $ref: `#/$defs/L${levels}` };
}
