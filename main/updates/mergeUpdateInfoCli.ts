// The release job's step (.github/workflows/installers.yml): gathers every build's artifacts into
// one folder, joining the update-info files two builds wrote under one name (mergeUpdateInfo.ts).
//   node --import tsx main/updates/mergeUpdateInfoCli.ts <downloaded artifacts folder> <release folder>
import fs from "node:fs";
import path from "node:path";
import { mergeUpdateInfo } from "./mergeUpdateInfo.js";

const [from, to] = process.argv.slice(2);
if (from === undefined || to === undefined) {
    process.stderr.write("Usage: mergeUpdateInfoCli.ts <artifacts folder> <release folder>\n");
    process.exit(2);
}
fs.mkdirSync(to, { recursive: true });
const updateInfo = new Map<string, string[]>();
for (const artifact of fs.readdirSync(from, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    for (const file of fs.readdirSync(path.join(from, artifact.name))) {
        const source = path.join(from, artifact.name, file);
        if (/^latest.*\.yml$/.test(file)) {
            updateInfo.set(file, [...(updateInfo.get(file) ?? []), fs.readFileSync(source, "utf8")]);
        } else if (fs.existsSync(path.join(to, file))) {
            process.stderr.write(`Two builds made ${file}; each installer must have its own name (artifactName).\n`);
            process.exit(1);
        } else {
            fs.copyFileSync(source, path.join(to, file));
        }
    }
}
for (const [file, documents] of updateInfo) {
    fs.writeFileSync(path.join(to, file), mergeUpdateInfo(file, documents));
    process.stdout.write(`${file}: ${documents.length} build(s)\n`);
}
