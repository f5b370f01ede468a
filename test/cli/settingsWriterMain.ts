// A process that does nothing but save the settings, as the settings screen's key calls do, as
// fast as it can: for the test that kills a writer of settings.json mid-write (SIGKILL). It holds
// the data directory's lock as a Kvault does, fills the file with MAX_STORED_API_KEYS keys, prints
// "writing" and then rewrites it until it is killed. Usage: node --import tsx settingsWriterMain.ts DATA_DIR
import crypto from "node:crypto";
import path from "node:path";
import { newApiKey } from "../../host/settings/KvaultSettings.js";
import { MAX_STORED_API_KEYS } from "../../host/settings/parseSettingsFile.js";
import { SettingsFile } from "../../host/settings/SettingsFile.js";
import { DataDirectoryLock } from "../../host/store/DataDirectoryLock.js";

const dataDir = process.argv[2]!;
DataDirectoryLock.acquire(dataDir, { owner: "the settings writer of a test", log: () => undefined });
const file = await SettingsFile.open(path.join(dataDir, "settings.json"), { log: () => undefined });
const key = (index: number) =>
    Object.freeze({
        id: `key-${index}`,
        key: newApiKey(),
        createdAt: new Date().toISOString(),
        generation: crypto.randomBytes(8).toString("hex")
    });
await file.update((current) => ({
    ...current,
    apiKeys: Object.freeze(Array.from({ length: MAX_STORED_API_KEYS }, (_, index) => key(index)))
}));
process.stdout.write("writing\n");
// Until killed: each round replaces one key with a new one, as a revoke and a create would.
for (let round = 0; ; round++) {
    const index = round % MAX_STORED_API_KEYS;
    await file.update((current) => ({
        ...current,
        apiKeys: Object.freeze(current.apiKeys.map((entry, at) => (at === index ? key(index) : entry)))
    }));
}
