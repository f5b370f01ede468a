// `npm run serve`: the headless server as built JavaScript (out/main/serve.js, with the engine and
// inspection processes it starts beside it), run by node alone, so an install without its
// devDependencies (`npm ci --omit=dev`) serves. Where the build tool is installed (a development
// checkout), it builds first, so what runs is what the sources say. Plain JavaScript: tsx may be absent.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const builtServer = path.join(repositoryRoot, "out", "main", "serve.js");
const buildTool = path.join(repositoryRoot, "node_modules", "electron-vite", "bin", "electron-vite.js");

if (fs.existsSync(buildTool)) {
    // The build's output goes to stderr: stdout carries only what serve.ts promises there (its address and login links).
    const build = spawnSync(process.execPath, [buildTool, "build", "--logLevel", "warn"], { cwd: repositoryRoot, stdio: ["ignore", 2, 2] });
    if (build.status !== 0) {
        process.stderr.write(
            `Building Kvault failed (electron-vite build: ${build.signal ?? `exit ${build.status}`}); its errors are above.\n`
        );
        process.exit(1);
    }
}
if (!fs.existsSync(builtServer)) {
    process.stderr.write(
        `Kvault's headless server is not built: ${builtServer} is missing. Run \`npm run build\` where the devDependencies are installed (npm ci), then \`npm run serve\` again.\n`
    );
    process.exit(2);
}
await import(pathToFileURL(builtServer).href);
