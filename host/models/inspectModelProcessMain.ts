// The inspection process (inspectModelInChild.ts): one model file's header, read by
// inspectModelFile (Kvault's bounded reader, then node-llama-cpp's) in a process of its own.
import { inspectModelFile } from "./inspectModelFile.js";
import { serveInspection } from "./serveInspection.js";

void serveInspection((request) => inspectModelFile(request.path, { contextSize: request.contextSize, sequences: request.sequences }));
