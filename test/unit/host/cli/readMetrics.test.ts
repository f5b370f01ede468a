import { describe, expect, it } from "vitest";
import { readMetrics } from "../../../../host/cli/commands/readMetrics.js";

describe("readMetrics", () => {
    it("reads samples with their labels and skips comments and lines that are not samples", () => {
        const text = [
            "# HELP kvault_pages KV pages in the host pool, by state.",
            "# TYPE kvault_pages gauge",
            'kvault_pages{state="free"} 61',
            'kvault_pages{state="sealed"} 3',
            "kvault_queue_length 2",
            'kvault_compute_info{backend="cpu",devices="a \\"b\\", c"} 1',
            "not a sample line",
            "kvault_broken NaNish"
        ].join("\n");
        expect(readMetrics(text)).toEqual([
            { name: "kvault_pages", labels: { state: "free" }, value: 61 },
            { name: "kvault_pages", labels: { state: "sealed" }, value: 3 },
            { name: "kvault_queue_length", labels: {}, value: 2 },
            { name: "kvault_compute_info", labels: { backend: "cpu", devices: 'a "b", c' }, value: 1 }
        ]);
    });
});
