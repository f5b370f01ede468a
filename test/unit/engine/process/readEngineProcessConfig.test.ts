import { describe, expect, it } from "vitest";
import { ENGINE_CONFIG_ENV, readEngineProcessConfig } from "../../../../engine/process/readEngineProcessConfig.js";

describe("readEngineProcessConfig", () => {
    it("reads the JSON from the environment first, then from argv[2]", () => {
        const fromEnv = readEngineProcessConfig({ [ENGINE_CONFIG_ENV]: JSON.stringify({ modelPath: "/m.gguf", window: 512 }) }, [
            "node",
            "main.js",
            '{"modelPath":"/other.gguf"}'
        ]);
        expect(fromEnv).toEqual({ ok: true, config: { modelPath: "/m.gguf", window: 512 } });
        expect(readEngineProcessConfig({}, ["node", "main.js", '{"modelPath":"/other.gguf"}'])).toEqual({
            ok: true,
            config: { modelPath: "/other.gguf" }
        });
    });

    it.each([
        ["nothing", {}, /No engine configuration: set KVAULT_ENGINE_CONFIG/],
        ["not JSON", { [ENGINE_CONFIG_ENV]: "{modelPath:" }, /is not JSON/],
        ["a list", { [ENGINE_CONFIG_ENV]: "[]" }, /must be a JSON object/],
        ["no modelPath", { [ENGINE_CONFIG_ENV]: '{"window":512}' }, /has no modelPath/],
        ["an empty modelPath", { [ENGINE_CONFIG_ENV]: '{"modelPath":""}' }, /has no modelPath/]
    ])("refuses %s with what to do", (_, env, message) => {
        const result = readEngineProcessConfig(env, ["node", "main.js"]);
        expect(result.ok).toBe(false);
        expect((result as { message: string }).message).toMatch(message);
    });
});
