// The crash test's writer: `node --import tsx storeCrashChild.ts <journal|metadata> <dataDir> <first index>`.
// Opens the store as Kvault does, then saves in a loop, printing "start <index>" before each save
// and "ack <index>" once it has resolved (on disk, fsync'd), until the parent kills it. Bounded:
// it stops after 100,000 saves.
import { WorkspaceStore } from "../../../host/store/WorkspaceStore.js";
import { crashMessage, crashMeta, crashWorkspace } from "./crashMessages.js";

const MAX_SAVES = 100_000;

const [mode, dataDir, firstText] = process.argv.slice(2);
const first = Number(firstText);
const store = await WorkspaceStore.open(dataDir!);
if (mode === "journal") {
    if ((await store.load()).workspaces.length === 0) {
        await store.saveWorkspace(crashWorkspace);
    }
    for (let index = first; index < first + MAX_SAVES; index++) {
        const message = crashMessage(index);
        process.stdout.write(`start ${index}\n`);
        await store.appendMessage(crashWorkspace.id, message);
        process.stdout.write(`ack ${index}\n`);
    }
} else {
    for (let index = first; index < first + MAX_SAVES; index++) {
        const meta = crashMeta(index);
        process.stdout.write(`start ${index}\n`);
        await store.saveWorkspace(meta);
        process.stdout.write(`ack ${index}\n`);
    }
}
