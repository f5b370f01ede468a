// Lint rules that keep the process boundaries honest (docs/ARCHITECTURE.md, Processes):
// only main/ may import electron, only engine/runtime/ and host/models/ may import node-llama-cpp,
// main/ and host/ reach the engine only through engine/index.ts, and everyone reaches synthetic/ through synthetic/index.ts
// and gguf/ (the one bounded GGUF header reader) through gguf/index.ts,
// the renderer reaches the rest of the app only through contract/, the one RPC client (contract/rpcClient/) imports only
// contract/ so that a page and a Node process run it alike, and only host/createHost.ts assembles a host.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const electronOnlyInMain = {
    name: "electron",
    message: "Only main/ may import electron: the rest also runs in headless mode, without Electron. Reach the host through contract/."
};
/** main/ and host/ see the engine only through engine/index.ts, its public surface. */
const engineThroughIndex = {
    regex: "^(\\.\\./)+engine/(?!index\\.js$)",
    message: "Import the engine through engine/index.js, its public surface; add the export there if a host needs it."
};
const llamaOnlyInRuntime = {
    name: "node-llama-cpp",
    message:
        "Only engine/runtime/ (and host/models/, for GGUF headers and downloads) may import node-llama-cpp. Add a function there instead."
};

/** Synthetic models are one library behind synthetic/index.ts: the hosts, the engine's drills and the tests ask it for files. */
const syntheticThroughIndex = {
    regex: "^(\\.\\./)+synthetic/(?!index\\.js$)",
    message: "Import synthetic models through synthetic/index.js, their public surface; add the export there if you need it."
};
/** synthetic/ takes only the engine's leaf modules (invariant, errors, GGML types), so the engine can use it without a cycle. */
const engineLeavesOnly = {
    regex: "^(\\.\\./)+engine/(?!core/|gguf/ggufTypes\\.js$)",
    message: "synthetic/ may import only engine/core/ and engine/gguf/ggufTypes.js: the engine's drills import synthetic/."
};
/** The one GGUF header reader is a library behind gguf/index.ts: the host's model library and synthetic/ both read through it. */
const ggufThroughIndex = {
    regex: "^(\\.\\./)+gguf/(?!index\\.js$)",
    message: "Import the GGUF header reader through gguf/index.js, its public surface; add the export there if you need it."
};
/** The same from synthetic/'s folders, two levels down: their own "../gguf/" is synthetic/gguf/, the writer. */
const ggufThroughIndexFromSynthetic = { ...ggufThroughIndex, regex: "^\\.\\./\\.\\./gguf/(?!index\\.js$)" };
/** gguf/ takes only engine/core/ and nothing of the host, synthetic/ or contract/, so everyone may import it without a cycle. */
const ggufLeavesOnly = {
    regex: "^(\\.\\./)+(engine/(?!core/)|host/|main/|synthetic/|contract/|renderer/)",
    message: "gguf/ may import only engine/core/: the host, the engine and synthetic/ all import gguf/."
};

/** One composition root: host/createHost.ts assembles a host's RPC; tests may build their own dispatcher. */
const oneCompositionRoot = {
    selector: "NewExpression[callee.name='RpcDispatcher']",
    message:
        "Hosts are assembled by createHost (host/createHost.ts): pass what differs in its platform instead of building a dispatcher here."
};

const extensionless = "Literal[value=/^\\.{1,2}\\/(?!.*\\.(js|mjs|css|json|html)$)/]";
const relativeImportsWithExtension = [
    { selector: `ImportDeclaration > ${extensionless}`, message: "Name the file of a relative import with its .js extension." },
    { selector: `ExportNamedDeclaration > ${extensionless}`, message: "Name the file of a relative export with its .js extension." },
    { selector: `ExportAllDeclaration > ${extensionless}`, message: "Name the file of a relative export with its .js extension." },
    { selector: `ImportExpression > ${extensionless}`, message: "Name the file of a relative import with its .js extension." }
];

export default tseslint.config(
    { ignores: ["node_modules/", "out/", "dist/", "release/", ".cache/", "test/.artifacts/"] },
    js.configs.recommended,
    ...tseslint.configs.recommended,
    {
        languageOptions: {
            ecmaVersion: 2023,
            sourceType: "module",
            globals: {
                console: "readonly",
                process: "readonly",
                Buffer: "readonly",
                URL: "readonly",
                setTimeout: "readonly",
                clearTimeout: "readonly",
                setInterval: "readonly",
                clearInterval: "readonly",
                performance: "readonly",
                TextEncoder: "readonly",
                TextDecoder: "readonly",
                AbortController: "readonly",
                AbortSignal: "readonly",
                queueMicrotask: "readonly",
                structuredClone: "readonly",
                window: "readonly",
                document: "readonly",
                requestAnimationFrame: "readonly",
                cancelAnimationFrame: "readonly"
            }
        },
        rules: {
            "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
            "@typescript-eslint/consistent-type-imports": "error",
            "no-restricted-imports": ["error", { paths: [electronOnlyInMain, llamaOnlyInRuntime] }],
            // One dialect: braces on every block, and relative imports name the file as Node's ESM loader does (.js).
            curly: ["error", "all"],
            "no-restricted-syntax": ["error", ...relativeImportsWithExtension]
        }
    },
    {
        files: ["main/**", "host/**"],
        ignores: ["host/createHost.ts"],
        rules: { "no-restricted-syntax": ["error", ...relativeImportsWithExtension, oneCompositionRoot] }
    },
    {
        files: ["main/**"],
        rules: {
            "no-restricted-imports": [
                "error",
                { paths: [llamaOnlyInRuntime], patterns: [engineThroughIndex, syntheticThroughIndex, ggufThroughIndex] }
            ]
        }
    },
    {
        files: ["host/**"],
        rules: {
            "no-restricted-imports": [
                "error",
                { paths: [electronOnlyInMain, llamaOnlyInRuntime], patterns: [engineThroughIndex, syntheticThroughIndex, ggufThroughIndex] }
            ]
        }
    },
    {
        files: ["engine/**"],
        rules: {
            "no-restricted-imports": ["error", { paths: [electronOnlyInMain, llamaOnlyInRuntime], patterns: [syntheticThroughIndex] }]
        }
    },
    {
        files: ["synthetic/**"],
        rules: {
            "no-restricted-imports": [
                "error",
                { paths: [electronOnlyInMain, llamaOnlyInRuntime], patterns: [engineLeavesOnly, ggufThroughIndexFromSynthetic] }
            ]
        }
    },
    {
        files: ["gguf/**"],
        rules: { "no-restricted-imports": ["error", { paths: [electronOnlyInMain, llamaOnlyInRuntime], patterns: [ggufLeavesOnly] }] }
    },
    {
        // The host reads GGUF headers and downloads models with node-llama-cpp's own readers, in the host's process.
        files: ["host/models/**"],
        rules: {
            "no-restricted-imports": [
                "error",
                { paths: [electronOnlyInMain], patterns: [engineThroughIndex, syntheticThroughIndex, ggufThroughIndex] }
            ]
        }
    },
    {
        // test/support/generateGreedy.ts drives a bare node-llama-cpp model for the model tier's first-generation test.
        files: ["engine/runtime/**", "test/model/**", "test/bench/**", "test/support/generateGreedy.ts"],
        rules: { "no-restricted-imports": ["error", { paths: [electronOnlyInMain] }] }
    },
    {
        // The leak probe audits any endpoint from outside, as a client: it sees Kvault only through its API.
        files: ["probe/**"],
        rules: {
            "no-restricted-imports": [
                "error",
                {
                    paths: [electronOnlyInMain, llamaOnlyInRuntime],
                    patterns: [
                        {
                            group: ["**/engine/**", "**/host/**", "**/main/**", "**/renderer/**"],
                            message: "The leak probe imports only from contract/ and probe/: it audits an endpoint from outside."
                        }
                    ]
                }
            ]
        }
    },
    {
        // The one RPC client runs in a page and in Node alike (the renderer, the kvault command, the tests): it takes only contract/.
        files: ["contract/rpcClient/**"],
        rules: {
            "no-restricted-imports": [
                "error",
                {
                    paths: [electronOnlyInMain, llamaOnlyInRuntime],
                    patterns: [
                        {
                            group: ["**/engine/**", "**/host/**", "**/main/**", "**/renderer/**", "node:*", "ws"],
                            message:
                                "contract/rpcClient/ runs in the renderer too: it imports only contract/ and the runtime's own WebSocket."
                        }
                    ]
                }
            ]
        }
    },
    {
        files: ["renderer/**"],
        rules: {
            "no-restricted-imports": [
                "error",
                {
                    paths: [electronOnlyInMain, llamaOnlyInRuntime],
                    patterns: [
                        {
                            group: ["**/engine/**", "**/main/**", "node:*"],
                            message: "The renderer imports only from contract/ (docs/ARCHITECTURE.md, Processes)."
                        }
                    ]
                }
            ]
        }
    }
);
