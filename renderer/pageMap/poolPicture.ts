import type { DecodedPageMap } from "./decodeSnapshot.js";
import type { PageMapTheme } from "./pageColour.js";

/** The pool's pages as the map draws them: each page's state number (an index into `pageStateNames`) and owner. */
export interface PoolPages {
    readonly states: Uint8Array;
    readonly owners: readonly (string | undefined)[];
}

/** Bits of a page's code that hold its state number; the colour's index is above them. */
export const STATE_BITS = 3;
const STATE_MASK = (1 << STATE_BITS) - 1;

/**
 * What the pool's canvas draws, one number a page, so that two pictures compare page by page in a
 * typed-array loop: a page's code is its state number plus its colour's index in `colours` shifted
 * up by `STATE_BITS`.
 */
export interface PoolPicture {
    readonly codes: Uint32Array;
    readonly colours: readonly string[];
}

export function codeState(code: number): number {
    return code & STATE_MASK;
}

export function codeColour(code: number): number {
    return code >>> STATE_BITS;
}

/** The live pool's picture, straight from the snapshot's typed arrays: a page's colour index is its owner slot. */
export function livePoolPicture(
    pageMap: DecodedPageMap,
    ownerColour: (owner: string) => string | undefined,
    theme: PageMapTheme
): PoolPicture {
    const codes = new Uint32Array(pageMap.numPages);
    const { states, ownerSlots } = pageMap;
    for (let page = 0; page < codes.length; page++) {
        codes[page] = states[page]! | (ownerSlots[page]! << STATE_BITS);
    }
    const colours = [theme.unknownOwner, ...pageMap.owners.map((owner) => ownerColour(owner) ?? theme.unknownOwner)];
    return { codes, colours };
}

/** The picture of pages given by owner id (the timeline's replay of an earlier moment). */
export function poolPictureOf(pages: PoolPages, ownerColour: (owner: string) => string | undefined, theme: PageMapTheme): PoolPicture {
    const codes = new Uint32Array(pages.states.length);
    const colours = [theme.unknownOwner];
    const indexes = new Map<string, number>();
    for (let page = 0; page < codes.length; page++) {
        const owner = pages.owners[page];
        let index = 0;
        if (owner !== undefined) {
            index = indexes.get(owner) ?? colours.length;
            if (index === colours.length) {
                indexes.set(owner, index);
                colours.push(ownerColour(owner) ?? theme.unknownOwner);
            }
        }
        codes[page] = pages.states[page]! | (index << STATE_BITS);
    }
    return { codes, colours };
}
