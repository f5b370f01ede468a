import { describe, expect, it } from "vitest";
import { kvMemoryLabel, kvWhereLabel } from "../../../../renderer/pageMap/kvMemoryLabel.js";

describe("kvMemoryLabel: where the page map and the meters say a context's KV lives", () => {
    it("names device memory, RAM, or the layers of each when split", () => {
        expect(kvMemoryLabel({ where: "device", numLayersOnDevice: 2, numLayers: 2 })).toBe("KV in device memory");
        expect(kvMemoryLabel({ where: "ram", numLayersOnDevice: 0, numLayers: 2 })).toBe("KV in RAM");
        expect(kvMemoryLabel({ where: "split", numLayersOnDevice: 20, numLayers: 32 })).toBe(
            "KV split: 20 of 32 layers' KV in device memory, 12 in RAM"
        );
        expect(kvWhereLabel("split")).toBe("device memory and RAM");
    });
});
