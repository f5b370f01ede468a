import { describe, expect, it } from "vitest";
import { formatPresetCatalog, type PresetSizes } from "../../../../synthetic/model/presetCatalog.js";

const sizes: PresetSizes[] = [
    {
        name: "qwen3-tiny",
        description: "Qwen3 architecture; for tests",
        architecture: "qwen3",
        tokenizer: "Qwen2's BPE tokenizer",
        numParameters: 9_822_656,
        numTokens: 151_936,
        fileBytes: { f16: 25_580_928, q8_0: 16_000_000, q4_0: 11_461_504, q4_k: 11_461_504 }
    },
    {
        name: "gemma3-1b",
        description: "Gemma 3 1B's geometry",
        architecture: "gemma3",
        tokenizer: "Gemma's tokenizer",
        numParameters: 999_900_000,
        numTokens: 262_144,
        fileBytes: { f16: 2_016_000_000, q8_0: 1_079_000_000, q4_0: 579_000_000, q4_k: 579_000_000 }
    }
];

describe("formatPresetCatalog", () => {
    it("shows each preset's architecture, parameters, vocabulary and file size per quantisation, in aligned columns", () => {
        const lines = formatPresetCatalog(sizes).split("\n");
        expect(lines[0]).toMatch(/^Preset\s+Architecture\s+Parameters\s+Vocabulary\s+F16\s+Q8_0\s+Q4_0\s+Q4_K_S$/);
        expect(lines[1]).toMatch(/^qwen3-tiny\s+qwen3\s+9\.8M\s+151,936\s+26 MB\s+16 MB\s+11 MB\s+11 MB$/);
        expect(lines[2]).toMatch(/^gemma3-1b\s+gemma3\s+999\.9M\s+262,144\s+2016 MB\s+1079 MB\s+579 MB\s+579 MB$/);
        expect(lines[1]!.length).toBe(lines[0]!.length);
        expect(lines).toContain("  qwen3-tiny  Qwen3 architecture; for tests; tokenizer: Qwen2's BPE tokenizer");
    });
});
