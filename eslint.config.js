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

const extensionless = "Literal[value=/^\\.{1,2}\\/(?!.*\\.(js|css|json|html)$)/]";
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
            "no-restricted-imports": [
                "error",
                {
                    paths: [electronOnlyInMain, llamaOnlyInRuntime],
                    patterns: [
                        {
                            group: ["**/engine/**", "**/main/**", "node:*"],
                            message: "The renderer imports only from contract/ (ARCHITECTURE.md, Processes)."
                        }
                    ]
                }
            ]
        }
    }
);
