// The desktop app's model inspection process entry: electron.vite.config.ts builds it as
// out/main/inspectModelProcess.js, and Electron main starts it with utilityProcess.fork. Reading a
// header's memory estimate loads node-llama-cpp's binding, whose binary test this process cannot
// fork with the RunAsNode fuse off; it goes through main's relay, as the engine process's does.
import { relayBindingTestsToHost } from "../../engine/index.js";

const relay = relayBindingTestsToHost(process.env, (line) => process.stderr.write(`[kvault inspection ${process.pid}] ${line}\n`));
if (relay.kind === "invalid") {
    process.stderr.write(`[kvault inspection ${process.pid}] ${relay.problem} node-llama-cpp's binary test will not run.\n`);
}
// Loaded after the relay is in place, so the inspection's getLlama goes through it.
await import("./inspectModelProcessMain.js");
