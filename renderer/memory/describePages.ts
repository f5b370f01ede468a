/** Page indexes as runs, e.g. "pages 3–5, 9": a handoff's pages are usually one run. */
export function describePages(pages: readonly number[] | undefined): string {
    if (pages === undefined || pages.length === 0) {
        return "";
    }
    const sorted = [...pages].sort((a, b) => a - b);
    const runs: string[] = [];
    let start = sorted[0]!;
    let end = start;
    for (const page of sorted.slice(1)) {
        if (page === end + 1) {
            end = page;
            continue;
        }
        runs.push(start === end ? `${start}` : `${start}–${end}`);
        start = end = page;
    }
    runs.push(start === end ? `${start}` : `${start}–${end}`);
    return `${sorted.length === 1 ? "page" : "pages"} ${runs.join(", ")}`;
}
