// A host's downloads in a process of their own (downloadInChild.ts starts it): starts one download
// with ModelDownloads, waits until it stops running, and posts its record and the process's peak
// resident memory. A download that ends the process ends only this one, not the test runner.
import { ModelDownloads } from "../../host/models/downloadModel.js";
import { settled } from "./modelFileServer.js";

const [source, modelsDirectory, keepFreeBytes] = process.argv.slice(2);
const downloads = new ModelDownloads({
    modelsDirectory: modelsDirectory!,
    stallMs: 30_000,
    keepFreeBytes: keepFreeBytes === undefined ? undefined : Number(keepFreeBytes)
});
const record = await settled(downloads, downloads.start(source!).id, 60_000);
await downloads.dispose();
// resourceUsage's maxRSS is in KiB.
process.send!({ record, maxRssBytes: process.resourceUsage().maxRSS * 1024 }, () => process.exit(0));
