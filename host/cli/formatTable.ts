/**
 * Rows as aligned columns, the first row the header, as `ollama ls` and `lms ps` print them: each
 * column as wide as its widest cell, two spaces between, no trailing spaces.
 */
export function formatTable(rows: readonly (readonly string[])[]): string {
    const widths: number[] = [];
    for (const row of rows) {
        row.forEach((cell, column) => {
            widths[column] = Math.max(widths[column] ?? 0, cell.length);
        });
    }
    return rows
        .map((row) =>
            row
                .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
                .join("  ")
                .trimEnd()
        )
        .join("\n");
}
