// The node-llama-cpp types the engine core may name, re-exported so that only engine/runtime/ imports the package.
export type { LlamaModel } from "node-llama-cpp";
