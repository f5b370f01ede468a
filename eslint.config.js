// Lint rules that keep the process boundaries of ARCHITECTURE.md honest:
// only main/ may import electron, only engine/runtime/ may import node-llama-cpp,
// and the renderer reaches the rest of the app only through contract/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const electronOnlyInMain = {
    name: "electron",
    message: "Only main/ may import electron (STYLE.md 9). Reach the host through contract/."
};
const llamaOnlyInRuntime = {
    name: "node-llama-cpp",
    message: "Only engine/runtime/ may import node-llama-cpp (STYLE.md 9). Add a function there instead."
};

export default tseslint.config(
    { ignores: ["node_modules/", "out/", "dist/", "release/", ".cache/", "test/.artifacts/"] },
    js.configs.recommended,
    ...tseslint.configs.recommended,
    {
        languageOptions: {
            ecmaVersion: 2023,
            sourceType: "module",
            globals: {
                console: "readonly", process: "readonly", Buffer: "readonly", URL: "readonly",
                setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly",
                performance: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", AbortController: "readonly",
                AbortSignal: "readonly", queueMicrotask: "readonly", structuredClone: "readonly",
                window: "readonly", document: "readonly", requestAnimationFrame: "readonly", cancelAnimationFrame: "readonly"
            }
        },
        rules: {
            "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
            "@typescript-eslint/consistent-type-imports": "error",
            "no-restricted-imports": ["error", { paths: [electronOnlyInMain, llamaOnlyInRuntime] }]
        }
    },
    {
        files: ["main/**"],
        rules: { "no-restricted-imports": ["error", { paths: [llamaOnlyInRuntime] }] }
    },
    {
        files: ["engine/runtime/**", "test/model/**", "test/bench/**"],
        rules: { "no-restricted-imports": ["error", { paths: [electronOnlyInMain] }] }
    },
    {
        files: ["renderer/**"],
        rules: {
            "no-restricted-imports": ["error", {
                paths: [electronOnlyInMain, llamaOnlyInRuntime],
                patterns: [{
                    group: ["**/engine/**", "**/main/**", "node:*"],
                    message: "The renderer imports only from contract/ (ARCHITECTURE.md, Processes)."
                }]
            }]
        }
    }
);
