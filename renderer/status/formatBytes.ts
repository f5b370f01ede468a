/** Bytes the short way, in binary units as the OS's memory tools count: "512 B", "24.0 KiB", "1.5 GiB". */
export function formatBytes(bytes: number): string {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let value = bytes;
    let unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

/** Bytes in full with the short form: "1,572,864 bytes (1.50 MiB)". */
export function formatBytesInFull(bytes: number): string {
    return `${bytes.toLocaleString("en-US")} bytes (${formatBytes(bytes)})`;
}

/** A rate of tokens: "23.5 tok/s". */
export function formatRate(tokensPerSecond: number): string {
    return `${tokensPerSecond.toFixed(1)} tok/s`;
}
