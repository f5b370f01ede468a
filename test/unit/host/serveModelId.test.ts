import { describe, expect, it } from "vitest";
import { serveModelId } from "../../../host/headless/resolveServeModel.js";

describe("serveModelId", () => {
    it("names a built-in model by its preset, any other file by its name without .gguf", () => {
        expect(serveModelId("/home/u/.kvault/models/tiny-v1.gguf")).toBe("tiny");
        expect(serveModelId("/data/models/small-v12.gguf")).toBe("small");
        expect(serveModelId("/models/Llama-3.2-1B-Instruct-Q4_K_M.GGUF")).toBe("Llama-3.2-1B-Instruct-Q4_K_M");
        expect(serveModelId("/models/tiny-finetune.gguf")).toBe("tiny-finetune");
    });
});
