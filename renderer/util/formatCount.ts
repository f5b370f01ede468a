/** A count the way messages show it: "4,096". */
export function formatCount(value: number): string {
    return value.toLocaleString("en-US");
}

/** "1 token", "4,096 tokens". */
export function formatTokens(value: number): string {
    return `${formatCount(value)} ${Math.abs(value) === 1 ? "token" : "tokens"}`;
}
