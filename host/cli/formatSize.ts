const UNITS = ["B", "KB", "MB", "GB", "TB"] as const;

/** Bytes in decimal units with up to one decimal, as Ollama and Hugging Face print sizes: "397 MB", "4.9 GB". */
export function formatSize(bytes: number): string {
    let value = bytes;
    let unit = 0;
    while (value >= 1000 && unit < UNITS.length - 1) {
        value /= 1000;
        unit += 1;
    }
    const digits = unit === 0 || value >= 100 ? 0 : 1;
    return `${value.toFixed(digits)} ${UNITS[unit]}`;
}
