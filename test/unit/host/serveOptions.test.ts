import path from "node:path";
import { describe, expect, it } from "vitest";
import { engineSettingFlags, isLoopbackHost, parseServeOptions, ServeOptionsError } from "../../../host/headless/serveOptions.js";
import { engineConfigFor } from "../../../host/settings/engineConfigFor.js";
import { engineSettingDefaults } from "../../../host/settings/KvaultSettings.js";

describe("parseServeOptions", () => {
    it("defaults to loopback, the built-in tiny model and split mode, with a pool that holds every window", () => {
        const options = parseServeOptions([]);
        expect(options).toMatchObject({
            host: "127.0.0.1",
            port: 8080,
            model: { kind: "preset", preset: "tiny" },
            mode: "split",
            kvType: "f16",
            context: 4096,
            prefillCapacity: 4096,
            decodeSequences: 4,
            pageTokens: 256
        });
        expect(options.poolPages).toBe(16 * 5);
        expect(options.apiKey).toBeUndefined();
    });

    it("reads every flag, in both spellings", () => {
        const options = parseServeOptions(
            [
                "--host",
                "::1",
                "--port=0",
                "--model",
                "models/x.gguf",
                "--mode",
                "unified",
                "--kv-type",
                "q8_0",
                "--context",
                "2048",
                "--prefill-capacity",
                "1024",
                "--decode-sequences",
                "2",
                "--page-tokens",
                "64",
                "--pool-pages",
                "100",
                "--api-key",
                "secret-key-1",
                "--data-dir",
                "/tmp/kv",
                "--download-stall-seconds",
                "5",
                "--extra-api-key",
                "alice=alice-key-1",
                "--extra-api-key=bob_2=bob.key-2",
                "--backend",
                "gpu=http://127.0.0.1:8000/v1,key-env=GPU_KEY,model=m/1",
                "--cors-origin",
                "http://App.example:8000/",
                "--cors-origin=https://b.example",
                "--log-prompts",
                "--models-folder",
                "/tmp/my-models",
                "--models-folder=/tmp/more",
                "--model-idle-seconds",
                "30",
                "--models-memory-mb=4096"
            ],
            { GPU_KEY: "gpu-secret" }
        );
        expect(options).toEqual({
            host: "::1",
            allowRemote: false,
            port: 0,
            model: { kind: "file", path: path.resolve("models/x.gguf") },
            mode: "unified",
            kvType: "q8_0",
            context: 2048,
            prefillCapacity: 1024,
            decodeSequences: 2,
            pageTokens: 64,
            poolPages: 100,
            apiKey: "secret-key-1",
            dataDir: "/tmp/kv",
            downloadStallSeconds: 5,
            handoffDemoMs: 0,
            streamDemoMs: 0,
            extraApiKeys: [
                { id: "alice", key: "alice-key-1" },
                { id: "bob_2", key: "bob.key-2" }
            ],
            engineFromCommandLine: { contextSize: 2048, kvCacheType: "q8_0", decodeSequences: 2, pageTokens: 64, poolPages: 100 },
            engineFlags: engineSettingFlags,
            modelGiven: true,
            prefillCapacityGiven: true,
            backends: [
                {
                    name: "gpu",
                    apiBase: "http://127.0.0.1:8000/v1",
                    root: "http://127.0.0.1:8000",
                    keyEnv: "GPU_KEY",
                    key: "gpu-secret",
                    model: "m/1",
                    remote: false
                }
            ],
            corsOrigins: ["http://app.example:8000", "https://b.example"],
            logPrompts: true,
            // over settings.json's modelPool for this run (host/settings/ModelPoolSettingsHost.ts)
            modelPoolFromCommandLine: { modelsFolders: ["/tmp/my-models", "/tmp/more"], modelIdleSeconds: 30, modelsMemoryMb: 4096 }
        });
        // none given: settings.json's (default 300 s, the machine's RAM, no folder) are in force
        expect(parseServeOptions([]).modelPoolFromCommandLine).toEqual({});
        expect(() => parseServeOptions(["--model-idle-seconds", "0"])).toThrow(
            '--model-idle-seconds is "0"; it must be a whole number from 1 to 604,800.'
        );
    });

    it("names the engine settings given on the command line, which override settings.json for this run", () => {
        expect(parseServeOptions([]).engineFromCommandLine).toEqual({});
        expect(parseServeOptions(["--threads", "3", "--flash-attention", "off", "--gpu", "off"]).engineFromCommandLine).toEqual({
            threads: 3,
            flashAttention: false,
            gpu: "off"
        });
        expect(() => parseServeOptions(["--flash-attention", "yes"])).toThrow('--flash-attention is "yes"; use "on" or "off".');
        expect(() => parseServeOptions(["--gpu", "opencl"])).toThrow(
            '--gpu is "opencl"; use auto, cuda, vulkan, metal or off. For a number of layers on the GPU, add --gpu-layers N.'
        );
        expect(() => parseServeOptions(["--threads", "0"])).toThrow('--threads is "0"; it must be a whole number from 1 to 1,024.');
    });

    it("takes --gpu cuda|vulkan|metal, a backend named for this run, which reaches the engine's configuration", () => {
        for (const backend of ["cuda", "vulkan", "metal"] as const) {
            const named = parseServeOptions(["--gpu", backend]);
            expect(named.engineFromCommandLine).toEqual({ gpu: backend });
            expect(named.engineFlags.gpu).toBe("--gpu");
            expect(engineConfigFor({ ...engineSettingDefaults, gpu: backend })).toMatchObject({ gpu: backend, gpuLayers: undefined });
        }
        expect(engineConfigFor({ ...engineSettingDefaults, gpu: "off" })).toMatchObject({ gpu: false });
        expect(engineConfigFor({ ...engineSettingDefaults, gpuLayers: 5 })).toMatchObject({ gpu: "auto", gpuLayers: 5 });
    });

    it("takes --gpu with --gpu-layers: that many layers on the named backend, each flag named on the settings screen", () => {
        const both = parseServeOptions(["--gpu", "vulkan", "--gpu-layers", "2"]);
        expect(both.engineFromCommandLine).toEqual({ gpu: "vulkan", gpuLayers: 2 });
        expect(both.engineFlags).toMatchObject({ gpu: "--gpu", gpuLayers: "--gpu-layers" });
        expect(engineConfigFor({ ...engineSettingDefaults, ...both.engineFromCommandLine })).toMatchObject({ gpu: "vulkan", gpuLayers: 2 });
        expect(parseServeOptions(["--gpu", "cuda", "--gpu-layers", "auto"]).engineFromCommandLine).toEqual({
            gpu: "cuda",
            gpuLayers: "auto"
        });
        expect(parseServeOptions(["--gpu", "off", "--gpu-layers", "off"]).engineFromCommandLine).toEqual({ gpu: "off" });
        expect(() => parseServeOptions(["--gpu", "vulkan", "--gpu-layers", "off"])).toThrow(
            "--gpu vulkan and --gpu-layers off disagree: give --gpu-layers 0 to keep every layer on the CPU with vulkan, or --gpu off."
        );
    });

    it("takes --gpu-layers N|auto|off alone, leaving the backend to the settings file (off: the CPU alone)", () => {
        const layers = parseServeOptions(["--gpu-layers", "12"]);
        expect(layers.engineFromCommandLine).toEqual({ gpuLayers: 12 });
        expect(layers.engineFlags.gpuLayers).toBe("--gpu-layers");
        expect(parseServeOptions(["--gpu-layers", "0"]).engineFromCommandLine).toEqual({ gpuLayers: 0 });
        const off = parseServeOptions(["--gpu-layers=off"]);
        expect(off.engineFromCommandLine).toEqual({ gpu: "off" });
        expect(off.engineFlags.gpu).toBe("--gpu-layers");
        expect(parseServeOptions(["--gpu-layers", "auto"]).engineFromCommandLine).toEqual({ gpuLayers: "auto" });
        expect(parseServeOptions(["--gpu", "off"]).engineFlags.gpu).toBe("--gpu");
        expect(parseServeOptions([]).engineFlags.contextSize).toBe("--context");
        expect(() => parseServeOptions(["--gpu-layers", "-3"])).toThrow(
            '--gpu-layers is "-3"; give a whole number of layers from 0 to 1,024 (at most the model\'s layers plus its output layer), "auto" or "off".'
        );
        expect(() => parseServeOptions(["--gpu-layers", "1025"])).toThrow(
            /--gpu-layers is "1025"; give a whole number of layers from 0 to 1,024/
        );
        expect(() => parseServeOptions(["--gpu-layers", "half"])).toThrow(/--gpu-layers is "half"/);
    });

    it("turns the page map's demo mode on with --handoff-demo, off by default", () => {
        expect(parseServeOptions([]).handoffDemoMs).toBe(0);
        expect(parseServeOptions(["--handoff-demo", "800"]).handoffDemoMs).toBe(800);
    });

    it("takes speculative decoding as engine settings: --speculation off|input-lookup, or --draft-model PATH, and its drafting", () => {
        const none = parseServeOptions([]);
        expect(none.engineFromCommandLine).not.toHaveProperty("speculation");
        expect(none.engineFromCommandLine).not.toHaveProperty("draftMaxTokens");
        expect(parseServeOptions(["--speculation", "input-lookup"]).engineFromCommandLine).toMatchObject({ speculation: "input-lookup" });
        expect(parseServeOptions(["--speculation", "off"]).engineFromCommandLine).toMatchObject({ speculation: "off" });
        const draft = parseServeOptions(["--draft-model", "draft.gguf", "--draft-max", "8", "--draft-p-min", "0.75"]);
        expect(draft.engineFromCommandLine).toEqual({
            speculation: "draft-model",
            draftModel: path.resolve("draft.gguf"),
            draftMaxTokens: 8,
            draftMinConfidence: 0.75
        });
        expect(draft.engineFlags).toMatchObject({
            speculation: "--draft-model",
            draftModel: "--draft-model",
            draftMaxTokens: "--draft-max"
        });
        // the drafting alone tunes the settings' draft model
        expect(parseServeOptions(["--draft-p-min", "0"]).engineFromCommandLine).toEqual({ draftMinConfidence: 0 });
    });

    it("refuses a speculation it cannot run, naming the flag", () => {
        expect(() => parseServeOptions(["--speculation", "draft"])).toThrow(
            '--speculation is "draft"; use "off" or "input-lookup", or give --draft-model PATH for a draft model.'
        );
        expect(() => parseServeOptions(["--speculation", "input-lookup", "--draft-model", "d.gguf"])).toThrow(
            "--speculation input-lookup and --draft-model are both given; give one."
        );
        expect(() => parseServeOptions(["--draft-model", "d.gguf", "--draft-max", "65"])).toThrow(
            '--draft-max is "65"; it must be a whole number from 1 to 64.'
        );
        for (const pMin of ["1.5", "-0.1", "half", "NaN"]) {
            expect(() => parseServeOptions(["--draft-model", "d.gguf", "--draft-p-min", pMin])).toThrow(ServeOptionsError);
        }
    });

    it("turns the streaming demo mode on with --stream-demo, off by default", () => {
        expect(parseServeOptions([]).streamDemoMs).toBe(0);
        expect(parseServeOptions(["--stream-demo", "25"]).streamDemoMs).toBe(25);
    });

    it("takes the key from KVAULT_API_KEY when no flag gives one", () => {
        expect(parseServeOptions([], { KVAULT_API_KEY: "from-the-environment" }).apiKey).toBe("from-the-environment");
        expect(parseServeOptions(["--api-key", "flag-wins-1"], { KVAULT_API_KEY: "from-the-environment" }).apiKey).toBe("flag-wins-1");
    });

    it.each([
        [["--extra-api-key", "alice"], /--extra-api-key "alice" is not ID=KEY/],
        [["--extra-api-key", "a:b=long-enough-key"], /--extra-api-key "a:b=long-enough-key" is not ID=KEY/],
        [["--extra-api-key", "alice=short"], /--extra-api-key "alice=short" is not ID=KEY/],
        [["--extra-api-key", "a=key-number-1", "--extra-api-key", "a=key-number-2"], /the id "a" is given twice/],
        [["--api-key", "key-number-1", "--extra-api-key", "a=key-number-1"], /the key for "a" is the same as another key/],
        [["--cors-origin", "http://a.example/app"], /--cors-origin "http:\/\/a.example\/app" is not an origin/],
        [["--bogus"], /Unknown option "--bogus"/],
        [["--port"], /--port needs a value/],
        [["--port", "70000"], /--port is "70000"; it must be a whole number from 0 to 65,535/],
        [["--context", "4k"], /--context is "4k"/],
        [["--mode", "fast"], /--mode is "fast"; use "split" or "unified"/],
        [["--kv-type", "q4_k"], /--kv-type is "q4_k"; use one of f16, q8_0, q4_0/],
        [["--decode-sequences", "0"], /--decode-sequences is "0"/],
        [["--port", "1", "--port", "2"], /--port is given twice/],
        [["--api-key", "short"], /The API key must be 8 to 200 characters/],
        [["--host", "0.0.0.0"], /--host 0.0.0.0 is not a loopback address.*add --allow-remote/],
        [["--host", "192.168.1.20"], /--host 192.168.1.20 is not a loopback address/],
        [["--host", "kvault.example"], /--host kvault.example is not a loopback address/],
        [["--allow-remote=yes"], /--allow-remote takes no value/],
        [["--handoff-demo", "9000"], /--handoff-demo is "9000"; it must be a whole number from 0 to 5,000/],
        [["--stream-demo", "1001"], /--stream-demo is "1001"; it must be a whole number from 0 to 1,000/]
    ])("refuses %j with a clear message", (argv, message) => {
        expect(() => parseServeOptions(argv)).toThrow(ServeOptionsError);
        expect(() => parseServeOptions(argv)).toThrow(message);
    });

    it("reads --backend: repeatable, /v1 added to a bare URL, a URL beyond loopback only with allow-remote", () => {
        const { backends } = parseServeOptions(
            ["--backend", "a=http://localhost:8080", "--backend=cloud=https://api.example.com/openai/v1/,key-env=CLOUD_KEY,allow-remote"],
            { CLOUD_KEY: "k" }
        );
        expect(backends).toEqual([
            { name: "a", apiBase: "http://localhost:8080/v1", root: "http://localhost:8080", remote: false },
            {
                name: "cloud",
                apiBase: "https://api.example.com/openai/v1",
                root: "https://api.example.com/openai",
                keyEnv: "CLOUD_KEY",
                key: "k",
                remote: true
            }
        ]);
    });

    it.each([
        [["--backend", "http://127.0.0.1:8000"], /does not start with NAME=/],
        [["--backend", "gpu=ftp://127.0.0.1/"], /--backend gpu: ftp: is not http: or https:/],
        [["--backend", "gpu=http://10.0.0.5:8000/v1"], /10\.0\.0\.5 is not a loopback address.*add ,allow-remote/i],
        [["--backend", "gpu=http://127.0.0.1:8000,key-env=NOT_SET_ANYWHERE"], /\$NOT_SET_ANYWHERE is not set/],
        [["--backend", "gpu=http://127.0.0.1:8000,colour=red"], /"colour=red" is not key-env=VAR/],
        [["--backend", "gpu=http://u:p@127.0.0.1:8000"], /takes no user, password/],
        [["--backend", "a=http://127.0.0.1:1", "--backend", "a=http://127.0.0.1:2"], /the name "a" is given twice/],
        // The settings screen's rules (checkBackendEntry) hold here too.
        [
            ["--backend", `gpu=http://127.0.0.1:8000,model=${"m".repeat(513)}`],
            /--backend gpu: the model id is empty or over 512 characters\./
        ],
        [
            ["--backend", "gpu=http://127.0.0.1:8000,key-env=SPACED_KEY"],
            /^--backend gpu: the key is not 1 to 4,096 printable characters without spaces \(it has 9 characters\)\. Set the variable/
        ]
    ])("refuses --backend %j, saying which part and why", (argv, message) => {
        expect(() => parseServeOptions(argv, { SPACED_KEY: "two words" })).toThrow(ServeOptionsError);
        expect(() => parseServeOptions(argv, { SPACED_KEY: "two words" })).toThrow(message);
    });

    it("listens beyond loopback only when --allow-remote says so", () => {
        expect(parseServeOptions(["--host", "0.0.0.0", "--allow-remote"])).toMatchObject({ host: "0.0.0.0", allowRemote: true });
        expect(parseServeOptions(["--allow-remote", "--host=::"])).toMatchObject({ host: "::", allowRemote: true });
        expect(parseServeOptions(["--host", "127.0.0.2"])).toMatchObject({ host: "127.0.0.2", allowRemote: false });
    });

    it.each([
        ["127.0.0.1", true],
        ["127.12.0.9", true],
        ["localhost", true],
        ["::1", true],
        ["0:0:0:0:0:0:0:1", true],
        ["::ffff:127.0.0.1", true],
        ["0.0.0.0", false],
        ["::", false],
        ["::ffff:10.0.0.1", false],
        ["128.0.0.1", false],
        ["fe80::1", false],
        ["kvault.example", false]
    ])("isLoopbackHost(%j) is %s", (host, loopback) => {
        expect(isLoopbackHost(host)).toBe(loopback);
    });
});
