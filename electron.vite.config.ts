// Builds the three bundles of the Electron app from this repo's layout (not electron-vite's
// src/ default): main/, the headless server and the processes both start → out/main,
// main/preload/ → out/preload, renderer/ → out/renderer.
import { resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig } from "electron-vite";
import type { Plugin } from "vite";
import { contentSecurityPolicy } from "./main/window/contentSecurityPolicy.js";

const root = import.meta.dirname;

export default defineConfig({
    main: {
        build: {
            outDir: resolve(root, "out/main"),
            // Four entries: the app's main process; the headless server (out/main/serve.js, which
            // `npm run serve` runs with node alone); and the engine process and the model inspection
            // process that both start, main with utilityProcess.fork and serve with child_process.fork
            // (out/main/engineProcess.js and out/main/inspectModelProcess.js, found beside the bundle).
            lib: {
                entry: {
                    index: resolve(root, "main/index.ts"),
                    serve: resolve(root, "host/headless/serve.ts"),
                    engineProcess: resolve(root, "engine/process/appEngineProcessMain.ts"),
                    inspectModelProcess: resolve(root, "host/models/appInspectModelProcessMain.ts"),
                    cli: resolve(root, "host/cli/cliMain.ts"),
                    probe: resolve(root, "probe/probeCli.ts")
                },
                formats: ["es"]
            },
            // Keeps every package.json dependency out of the bundle: node-llama-cpp and
            // @node-rs/xxhash load native binaries that must stay next to their own files.
            externalizeDeps: { include: ["node-llama-cpp"] }
        }
    },
    preload: {
        build: {
            outDir: resolve(root, "out/preload"),
            lib: { entry: resolve(root, "main/preload/index.ts"), formats: ["cjs"] },
            // A sandboxed preload can require only electron: everything else, contract/
            // included, is bundled into the one CommonJS file.
            externalizeDeps: false,
            // .cjs, because package.json says "type": "module" and a .js file would read as ESM.
            rolldownOptions: {
                output: { entryFileNames: "[name].cjs" }
            }
        }
    },
    renderer: {
        root: resolve(root, "renderer"),
        build: {
            outDir: resolve(root, "out/renderer"),
            rolldownOptions: {
                input: resolve(root, "renderer/index.html")
            }
        },
        plugins: [react(), developmentContentSecurityPolicy()]
    }
});

/**
 * The dev server needs inline scripts and styles (React Refresh, CSS hot reload), which the
 * production policy in renderer/index.html forbids; swap it for the development policy.
 * Fails loudly if index.html no longer carries the production policy verbatim.
 */
function developmentContentSecurityPolicy(): Plugin {
    const production = contentSecurityPolicy("production");
    return {
        name: "kvault:development-csp",
        apply: "serve",
        transformIndexHtml(html) {
            if (!html.includes(production)) {
                throw new Error('renderer/index.html must carry contentSecurityPolicy("production") in its CSP meta tag.');
            }
            return html.replace(production, contentSecurityPolicy("development"));
        }
    };
}
