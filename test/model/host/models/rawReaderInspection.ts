// An inspection process with an unforeseen reader bug: the real process (serveInspection, its
// watchdog, its heap limit) running node-llama-cpp's GGUF reader alone, without Kvault's checks in
// front of it. inspectModelInChild.test.ts shows the host still gets a typed model_unreadable.
import { readGgufFileInfo } from "node-llama-cpp";
import { serveInspection } from "../../../../host/models/serveInspection.js";

void serveInspection(async (request) => {
    const info = await readGgufFileInfo(request.path, { readTensorInfo: true, logWarnings: false, sourceType: "filesystem" });
    // A few of the facts' fields, enough to tell a good read (its tensor count in numLayers' place).
    return { path: request.path, architecture: info.metadata.general.architecture, numLayers: Number(info.tensorCount) };
});
