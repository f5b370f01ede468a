import { describe, expect, it } from "vitest";
import { windowOfModelEntry, windowOfProps } from "../../../probe/discoverEndpoint.js";
import { isLoopbackUrl, parseProbeOptions, ProbeOptionsError } from "../../../probe/probeOptions.js";

describe("npm run probe's options", () => {
    it("reads the keys from the variables named, and the bounds as given or by default", () => {
        const options = parseProbeOptions(
            ["--url", "http://127.0.0.1:8080/v1", "--model", "m", "--key-env", "K1", "--second-key-env=K2", "--window", "4096", "--yes"],
            { K1: "one", K2: "two" }
        );
        expect(options).toMatchObject({
            keyA: "one",
            keyB: "two",
            window: 4096,
            maxRequests: 40,
            maxTokens: 32,
            endpoint: "chat",
            yes: true,
            logprobs: true
        });
        expect(parseProbeOptions(["--url", "http://127.0.0.1:1", "--model", "m", "--no-logprobs"], {}).logprobs).toBe(false);
    });

    it("refuses what it cannot use, naming the option", () => {
        const fails = (argv: string[], message: string): void => {
            expect(() => parseProbeOptions(argv, {})).toThrow(ProbeOptionsError);
            expect(() => parseProbeOptions(argv, {})).toThrow(message);
        };
        const base = ["--url", "http://127.0.0.1:1", "--model", "m"];
        fails(["--model", "m"], "--url and --model are required");
        fails([...base, "--key-env", "NOT_SET"], "--key-env names NOT_SET, but that environment variable is not set.");
        fails([...base, "--window", "12k"], '--window must be a whole number from 64 to 100000000, not "12k".');
        fails([...base, "--max-tokens"], "--max-tokens needs a value.");
        fails([...base, "--endpoint", "responses"], '--endpoint is chat or completions, not "responses".');
        fails([...base, "--wat", "1"], 'Unknown option "--wat"');
        fails(["--url", "ftp://x", "--model", "m"], "--url must be http: or https:");
        fails([...base, "--model", "n"], "--model is given twice.");
    });

    it("runs without --yes on loopback only", () => {
        expect(["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:2", "http://127.9.0.3"].map(isLoopbackUrl)).toEqual([
            true,
            true,
            true,
            true
        ]);
        expect(["https://api.example.com", "http://10.0.0.2:8000", "http://128.0.0.1"].map(isLoopbackUrl)).toEqual([false, false, false]);
    });
});

describe("the window a server advertises", () => {
    it("is vLLM's max_model_len, another's context_length, or llama-server's n_ctx", () => {
        expect(windowOfModelEntry({ id: "m", max_model_len: 32_768 })).toEqual({ window: 32_768, field: "max_model_len" });
        expect(windowOfModelEntry({ id: "m", context_length: 8192 })).toEqual({ window: 8192, field: "context_length" });
        expect(windowOfModelEntry({ id: "m", top_provider: { context_length: 4096 } })).toEqual({ window: 4096, field: "context_length" });
        expect(windowOfModelEntry({ id: "m", max_model_len: "big" })).toBeUndefined();
        expect(windowOfProps({ default_generation_settings: { n_ctx: 2048 } })).toBe(2048);
        expect(windowOfProps({ n_ctx: 1024 })).toBe(1024);
        expect(windowOfProps("not json")).toBeUndefined();
    });
});
