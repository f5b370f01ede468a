/** One formatter for every count: toLocaleString builds a new one at each call, which the page map's words paid for at each snapshot. */
const countFormat = new Intl.NumberFormat("en-US");

/** A count the way messages show it: "4,096". */
export function formatCount(value: number): string {
    return countFormat.format(value);
}

/** "1 token", "4,096 tokens". */
export function formatTokens(value: number): string {
    return `${formatCount(value)} ${Math.abs(value) === 1 ? "token" : "tokens"}`;
}
