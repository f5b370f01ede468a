import { describe, expect, it } from "vitest";
import { LAUNCH_KEY_VARIABLE, launchPlan, launchTools, type LaunchTool } from "../../../../host/cli/launchTargets.js";

const target = (tool: LaunchTool) => ({
    tool,
    baseUrl: "http://127.0.0.1:8080",
    apiKey: "kv-tool-key",
    model: "qwen3-8b",
    toolArgs: ["-p", "hi"]
});

describe("launchPlan: each tool pointed at Kvault by what it reads", () => {
    it("gives every tool its own key under KVAULT_API_KEY, whatever key kvault itself was given", () => {
        for (const tool of launchTools) {
            expect(launchPlan(target(tool)).env[LAUNCH_KEY_VARIABLE], tool).toBe("kv-tool-key");
        }
    });

    it("points Claude Code at Anthropic's API on this server, with the key as a bearer token and Anthropic's own key blanked", () => {
        const plan = launchPlan(target("claude"));
        expect(plan.command).toBe("claude");
        expect(plan.args).toEqual(["--model", "qwen3-8b", "-p", "hi"]);
        expect(plan.env).toMatchObject({
            ANTHROPIC_BASE_URL: "http://127.0.0.1:8080",
            ANTHROPIC_AUTH_TOKEN: "kv-tool-key",
            ANTHROPIC_API_KEY: "",
            ANTHROPIC_MODEL: "qwen3-8b",
            ANTHROPIC_SMALL_FAST_MODEL: "qwen3-8b"
        });
    });

    it("gives Codex a Responses-API provider on its command line, its TOML naming the key's variable, not the key", () => {
        const plan = launchPlan(target("codex"));
        expect(plan.command).toBe("codex");
        expect(plan.args.slice(0, 2)).toEqual(["-c", 'model_provider="kvault"']);
        const provider = plan.args[3]!;
        expect(provider).toBe(
            'model_providers.kvault={ name = "Kvault", base_url = "http://127.0.0.1:8080/v1", env_key = "KVAULT_API_KEY", wire_api = "responses" }'
        );
        expect(provider).not.toContain("kv-tool-key");
        expect(plan.args.slice(4)).toEqual(["-m", "qwen3-8b", "-p", "hi"]);
    });

    it("gives opencode its whole configuration as JSON: an OpenAI-compatible provider on /v1 with the model chosen", () => {
        const plan = launchPlan(target("opencode"));
        const config = JSON.parse(plan.env.OPENCODE_CONFIG_CONTENT!) as {
            provider: { kvault: { npm: string; options: { baseURL: string; apiKey: string }; models: Record<string, unknown> } };
            model: string;
        };
        expect(config.model).toBe("kvault/qwen3-8b");
        expect(config.provider.kvault.npm).toBe("@ai-sdk/openai-compatible");
        expect(config.provider.kvault.options).toEqual({ baseURL: "http://127.0.0.1:8080/v1", apiKey: "{env:KVAULT_API_KEY}" });
        expect(Object.keys(config.provider.kvault.models)).toEqual(["qwen3-8b"]);
        expect(plan.args).toEqual(["-p", "hi"]);
    });

    it("escapes a base URL's quotes and backslashes in Codex's TOML", () => {
        const plan = launchPlan({ ...target("codex"), baseUrl: 'http://h/"x\\' });
        expect(plan.args[3]).toContain('base_url = "http://h/\\"x\\\\/v1"');
    });
});
