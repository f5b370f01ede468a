/** The coding tools `kvault launch` starts, each against this Kvault. */
export const launchTools = ["claude", "codex", "opencode"] as const;
export type LaunchTool = (typeof launchTools)[number];

/**
 * The window these tools need: their system prompts and tool lists alone take tens of thousands of
 * tokens, and Ollama's and LM Studio's guides for them ask for at least 64k.
 */
export const LAUNCH_MIN_WINDOW_TOKENS = 65_536;

/**
 * The variable each tool reads its Kvault key from (codex and opencode name it in their provider);
 * set for every tool, so that the key the user ran kvault with is never the one the tool sees.
 */
export const LAUNCH_KEY_VARIABLE = "KVAULT_API_KEY";

export interface LaunchPlan {
    /** The executable, found on PATH. */
    readonly command: string;
    readonly args: readonly string[];
    /** Added to the environment the tool inherits. */
    readonly env: Readonly<Record<string, string>>;
}

export interface LaunchTarget {
    readonly tool: LaunchTool;
    /** The server's base URL, without /v1. */
    readonly baseUrl: string;
    readonly apiKey: string;
    readonly model: string;
    /** Given after `--` on kvault's command line, passed to the tool. */
    readonly toolArgs: readonly string[];
}

/**
 * How each tool is pointed at Kvault, by what it reads: Claude Code takes Anthropic's base URL and a
 * bearer token from its environment (Kvault serves /v1/messages); Codex takes a model provider on
 * its command line (`-c`, TOML values) that speaks the Responses API with the key from an
 * environment variable; opencode takes its whole configuration as JSON in OPENCODE_CONFIG_CONTENT,
 * an OpenAI-compatible provider over Chat Completions.
 */
export function launchPlan({ tool, baseUrl, apiKey, model, toolArgs }: LaunchTarget): LaunchPlan {
    switch (tool) {
        case "claude":
            return {
                command: "claude",
                args: ["--model", model, ...toolArgs],
                env: {
                    [LAUNCH_KEY_VARIABLE]: apiKey,
                    ANTHROPIC_BASE_URL: baseUrl,
                    ANTHROPIC_AUTH_TOKEN: apiKey,
                    // set but empty: Claude Code would otherwise prefer a key of Anthropic's it finds
                    ANTHROPIC_API_KEY: "",
                    ANTHROPIC_MODEL: model,
                    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
                    ANTHROPIC_SMALL_FAST_MODEL: model,
                    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
                }
            };
        case "codex":
            return {
                command: "codex",
                args: [
                    "-c",
                    `model_provider="kvault"`,
                    "-c",
                    `model_providers.kvault={ name = "Kvault", base_url = ${tomlString(`${baseUrl}/v1`)}, env_key = "${LAUNCH_KEY_VARIABLE}", wire_api = "responses" }`,
                    "-m",
                    model,
                    ...toolArgs
                ],
                env: { [LAUNCH_KEY_VARIABLE]: apiKey }
            };
        case "opencode":
            return {
                command: "opencode",
                args: [...toolArgs],
                env: {
                    [LAUNCH_KEY_VARIABLE]: apiKey,
                    OPENCODE_CONFIG_CONTENT: JSON.stringify({
                        $schema: "https://opencode.ai/config.json",
                        provider: {
                            kvault: {
                                npm: "@ai-sdk/openai-compatible",
                                name: "Kvault",
                                options: { baseURL: `${baseUrl}/v1`, apiKey: `{env:${LAUNCH_KEY_VARIABLE}}` },
                                models: { [model]: { name: model } }
                            }
                        },
                        model: `kvault/${model}`
                    })
                }
            };
    }
}

/** A TOML basic string: JSON's escaping is a subset TOML accepts for these characters. */
function tomlString(text: string): string {
    return JSON.stringify(text);
}

export function isLaunchTool(name: string): name is LaunchTool {
    return (launchTools as readonly string[]).includes(name);
}
