// Main's binding-test relay on a real socket, with real test processes (child_process.fork
// playing utilityProcess.fork) and the engine process's own client. The test processes run a
// stand-in that speaks node-llama-cpp's test protocol; test/model/main/ runs node-llama-cpp's own.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RelayLineReader, encodeRelayLine, parseRelayAddress, type RelayFromTest } from "../../../../contract/bindingTestRelay.js";
import { RelayedBindingTest } from "../../../../engine/process/relayBindingTests.js";
import { isProcessAlive } from "../../../../engine/runtime/PrivateStateDirectory.js";
import { BindingTestRelay } from "../../../../main/engine/BindingTestRelay.js";
import type { UtilityChild } from "../../../../main/engine/UtilityEngineProcess.js";
import { forkAsUtilityProcess } from "../../../support/forkAsUtilityProcess.js";

const testModule = path.join(import.meta.dirname, "fixtures/bindingTestChild.mjs");
const relays: BindingTestRelay[] = [];

async function startRelay(): Promise<{ relay: BindingTestRelay; children: UtilityChild[]; logged: string[] }> {
    const children: UtilityChild[] = [];
    const logged: string[] = [];
    const relay = await BindingTestRelay.listen({
        testModule,
        fork: forkAsUtilityProcess({ onFork: (_path, child) => children.push(child) }),
        log: (line) => logged.push(line)
    });
    relays.push(relay);
    return { relay, children, logged };
}

/** Drives a test as node-llama-cpp's testBindingBinary does: start on ready, test on loaded, exit on done. */
function runTest(test: RelayedBindingTest, gpu: string | false): Promise<{ code: number | null; messages: unknown[] }> {
    const messages: unknown[] = [];
    test.on("message", (message: { type: string }) => {
        messages.push(message);
        const next = { ready: "start", loaded: "test", done: "exit" }[message.type];
        if (next !== undefined) {
            test.send({ type: next, bindingBinaryPath: "/bins/linux-x64/llama-addon.node", gpu });
        }
    });
    return new Promise((resolve) => test.once("exit", (code: number | null) => resolve({ code, messages })));
}

/** A raw client: one hello line, then what main answered. */
async function rawHello(relay: BindingTestRelay, hello: string): Promise<RelayFromTest[]> {
    const socket = net.connect(relay.address.path);
    socket.setEncoding("utf8");
    const lines: RelayFromTest[] = [];
    const reader = new RelayLineReader(
        (value) => lines.push(value as RelayFromTest),
        () => undefined
    );
    socket.on("data", (chunk: string) => reader.push(chunk));
    socket.write(hello);
    await new Promise((resolve) => socket.on("close", resolve));
    return lines;
}

afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
});

describe("BindingTestRelay", () => {
    it("forks the test for the engine, relays its messages both ways, and records a pass", async () => {
        const { relay, children } = await startRelay();
        const test = new RelayedBindingTest(relay.address, testModule, () => undefined);
        const { code, messages } = await runTest(test, false);

        expect(code).toBe(0);
        expect(messages).toEqual([{ type: "ready" }, { type: "loaded" }, { type: "done" }]);
        expect(children).toHaveLength(1);
        expect(test.pid).toBe(children[0]!.pid);
        expect(relay.tests).toEqual([
            { backend: "cpu", binaryPath: "/bins/linux-x64/llama-addon.node", outcome: "passed", exitCode: 0, output: "" }
        ]);
    });

    it("records a failed test with its backend, exit code and last words", async () => {
        const { relay, logged } = await startRelay();
        const { code } = await runTest(new RelayedBindingTest(relay.address, testModule, () => undefined), "cuda");

        expect(code).toBe(1);
        expect(relay.tests).toEqual([
            expect.objectContaining({ backend: "cuda", outcome: "failed", exitCode: 1, output: expect.stringContaining("libcuda.so.1") })
        ]);
        expect(logged).toContain("The cuda llama.cpp binary failed its test (exit code 1).");
    });

    it("refuses a wrong token and any other module, forking nothing", async () => {
        const { relay, children } = await startRelay();
        const wrongToken = { ...relay.address, token: "0".repeat(48) };
        const refusedLog: string[] = [];
        const { code } = await runTest(new RelayedBindingTest(wrongToken, testModule, (line) => refusedLog.push(line)), false);
        expect(code).toBe(1);
        expect(refusedLog).toEqual([expect.stringContaining("would not run the binding test: wrong token")]);

        expect(await rawHello(relay, encodeRelayLine({ token: relay.address.token, modulePath: "/tmp/evil.js" }))).toEqual([
            { refused: expect.stringContaining("only node-llama-cpp's binding test") }
        ]);
        expect(await rawHello(relay, `${"x".repeat(70_000)}\n`)).toEqual([
            { refused: expect.stringMatching(/^sent a line (of 70,000|longer than 65,536) characters/) }
        ]);
        expect(await rawHello(relay, "not json\n")).toEqual([{ refused: "sent a line that is not JSON" }]);
        expect(children).toHaveLength(0);
        expect(relay.tests).toEqual([]);
    });

    it("kills the test process when the engine gives up on it", async () => {
        const { relay, children } = await startRelay();
        const test = new RelayedBindingTest(relay.address, testModule, () => undefined);
        void runTest(test, "hang");
        await vi.waitFor(() => expect(relay.tests[0]?.backend).toBe("hang"));
        const pid = children[0]!.pid!;
        expect(isProcessAlive(pid)).toBe(true);

        const exited = new Promise((resolve) => test.once("exit", (code, signal) => resolve({ code, signal })));
        expect(test.kill("SIGKILL")).toBe(true);
        expect(await exited).toEqual({ code: null, signal: "SIGKILL" });
        await vi.waitFor(() => expect(isProcessAlive(pid)).toBe(false));
        await vi.waitFor(() => expect(relay.tests[0]?.outcome).toBe("failed"));
    });

    it("on close kills running tests, refuses new ones and removes its socket; twice is fine", async () => {
        const { relay, children } = await startRelay();
        const test = new RelayedBindingTest(relay.address, testModule, () => undefined);
        const ended = runTest(test, "hang");
        await vi.waitFor(() => expect(children).toHaveLength(1));
        const pid = children[0]!.pid!;

        await Promise.all([relay.close(), relay.close()]);
        expect((await ended).code).toBe(1);
        await vi.waitFor(() => expect(isProcessAlive(pid)).toBe(false));
        if (process.platform !== "win32") {
            expect(fs.existsSync(path.dirname(relay.address.path))).toBe(false);
        }
        const late = await runTest(new RelayedBindingTest(relay.address, testModule, () => undefined), false);
        expect(late.code).toBe(1);
    });

    it("hands engines its address through one environment variable", async () => {
        const { relay } = await startRelay();
        const env = relay.engineEnv();
        expect(Object.keys(env)).toEqual(["KVAULT_BINDING_TEST_RELAY"]);
        expect(parseRelayAddress(env.KVAULT_BINDING_TEST_RELAY)).toEqual(relay.address);
        if (process.platform !== "win32") {
            expect(fs.statSync(path.dirname(relay.address.path)).mode & 0o777).toBe(0o700);
        }
        expect(parseRelayAddress('{"path":"/x","token":"short"}')).toMatch(/48 hex characters/);
        expect(parseRelayAddress("{")).toBe("KVAULT_BINDING_TEST_RELAY is not JSON.");
        expect(parseRelayAddress(undefined)).toBeUndefined();
    });
});
