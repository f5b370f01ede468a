/** Parses a number field; undefined when it is not a number in [min, max] (and whole, if asked). */
export function parseSetting(text: string, min: number, max: number, whole: boolean): number | undefined {
    if (text.trim() === "") {
        return undefined;
    }
    const value = Number(text);
    if (!Number.isFinite(value) || value < min || value > max || (whole && !Number.isInteger(value))) {
        return undefined;
    }
    return value;
}
