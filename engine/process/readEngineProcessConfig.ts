import type { EngineConfigInput } from "../EngineConfig.js";

/** The environment variable a host puts the engine's configuration in, as JSON. */
export const ENGINE_CONFIG_ENV = "KVAULT_ENGINE_CONFIG";

export type EngineProcessConfigResult =
    | { readonly ok: true; readonly config: EngineConfigInput }
    | { readonly ok: false; readonly message: string };

/**
 * The configuration the host started this process with: `KVAULT_ENGINE_CONFIG`, else argv[2].
 * Only the JSON shape is checked here; `resolveEngineConfig` inside EngineService.start checks
 * every field and answers with the numbers.
 */
export function readEngineProcessConfig(
    env: Readonly<Record<string, string | undefined>>,
    argv: readonly string[]
): EngineProcessConfigResult {
    const text = env[ENGINE_CONFIG_ENV] ?? argv[2];
    if (text === undefined || text === "") {
        return {
            ok: false,
            message: `No engine configuration: set ${ENGINE_CONFIG_ENV} to its JSON, or pass the JSON as the first argument.`
        };
    }
    let value: unknown;
    try {
        value = JSON.parse(text);
    } catch (error) {
        return { ok: false, message: `The engine configuration is not JSON (${(error as Error).message}).` };
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return { ok: false, message: "The engine configuration must be a JSON object with at least modelPath." };
    }
    const config = value as Record<string, unknown>;
    if (typeof config.modelPath !== "string" || config.modelPath === "") {
        return { ok: false, message: "The engine configuration has no modelPath; give the path of a GGUF file." };
    }
    return { ok: true, config: config as unknown as EngineConfigInput };
}
