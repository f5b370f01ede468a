import { describe, expect, it } from "vitest";
import { meterLine } from "../../../../host/cli/commands/runChat.js";
import { formatProgress } from "../../../../host/cli/formatProgress.js";
import { formatSize } from "../../../../host/cli/formatSize.js";
import { formatTable } from "../../../../host/cli/formatTable.js";

describe("the kvault command's output", () => {
    it("aligns a table's columns to the widest cell, with no trailing spaces", () => {
        expect(
            formatTable([
                ["NAME", "SIZE"],
                ["qwen3:0.6b", "523 MB"],
                ["tiny", "868 KB"]
            ])
        ).toBe("NAME        SIZE\nqwen3:0.6b  523 MB\ntiny        868 KB");
    });

    it("says sizes in decimal units as Ollama does", () => {
        expect([formatSize(0), formatSize(868_123), formatSize(396_705_472), formatSize(4_920_000_000)]).toEqual([
            "0 B",
            "868 KB",
            "397 MB",
            "4.9 GB"
        ]);
    });

    it("draws a download's bar from its share, and says so when the total is not yet known", () => {
        expect(formatProgress({ name: "m.gguf", downloadedBytes: 50, totalBytes: 200, bytesPerSecond: 2_500_000 })).toBe(
            "m.gguf [#######-----------------------]  25%  50 B / 200 B  2.5 MB/s"
        );
        expect(formatProgress({ name: "m.gguf", downloadedBytes: 5_000, totalBytes: 0, bytesPerSecond: undefined })).toBe(
            "m.gguf [------------------------------]    ?  5.0 KB"
        );
    });

    it("says the meter's numbers: the chat's tokens of the window, with the share", () => {
        expect(meterLine(312, 4096)).toBe("[312 of 4,096 tokens in this chat's context (8%)]");
        expect(meterLine(70_000, undefined)).toBe("[70,000 tokens in this chat's context]");
    });
});
