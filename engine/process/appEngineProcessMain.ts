// The desktop app's engine process entry: electron.vite.config.ts builds it as
// out/main/engineProcess.js, and Electron main starts it with utilityProcess.fork. It routes
// node-llama-cpp's binary test through main (relayBindingTests.ts: the RunAsNode fuse is off, so
// this process cannot fork one itself), then runs the same engine process as headless mode.
import { relayBindingTestsToHost } from "./relayBindingTests.js";

const relay = relayBindingTestsToHost(process.env);
if (relay.kind === "invalid") {
    // Not fatal: without the relay a binary that needs its test fails it, and the start error says which.
    process.stderr.write(`[kvault engine ${process.pid}] ${relay.problem} node-llama-cpp's binary test will not run.\n`);
}
// Loaded after the relay is in place, so every getLlama this process makes goes through it.
await import("./engineProcessMain.js");
