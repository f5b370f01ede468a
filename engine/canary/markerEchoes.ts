/** Consecutive tokens of a marker that count as an echo of it: a partial run is enough. */
export const MIN_ECHO_TOKENS = 3;

/** Characters of a marker's secret that count as an echo of it in text. */
export const MIN_ECHO_CHARS = 6;

/** The longest run of consecutive tokens of `needle` that appears, in order, in `haystack`. */
export function longestCommonRun(haystack: readonly number[], needle: readonly number[]): number {
    let longest = 0;
    // Dynamic programming over suffixes: O(|haystack| × |needle|), both a few dozen tokens.
    let previous = new Uint16Array(needle.length + 1);
    for (let i = 1; i <= haystack.length; i++) {
        const current = new Uint16Array(needle.length + 1);
        for (let j = 1; j <= needle.length; j++) {
            if (haystack[i - 1] === needle[j - 1]) {
                current[j] = previous[j - 1]! + 1;
                longest = Math.max(longest, current[j]!);
            }
        }
        previous = current;
    }
    return longest;
}

/** The longest substring of `secret` found in `text`, in characters. */
export function longestSecretSubstring(text: string, secret: string): number {
    for (let length = secret.length; length > 0; length--) {
        for (let start = 0; start + length <= secret.length; start++) {
            if (text.includes(secret.slice(start, start + length))) {
                return length;
            }
        }
    }
    return 0;
}
