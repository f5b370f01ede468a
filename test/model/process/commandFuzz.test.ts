import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { EngineCommand } from "../../../contract/engineProtocol.js";
import { EngineSupervisor } from "../../../host/supervisor/EngineSupervisor.js";
import { parseEngineCommand } from "../../../engine/process/parseEngineCommand.js";
import { turnLimits } from "../../../contract/limits.js";
import { Conversation, RecordingSpawner, expectNoEngineLeft, isProcessAlive, tinyProcessConfig, waitUntil } from "./supervisorFixtures.js";

const validChat = (requestId: string): Record<string, unknown> => ({
    type: "chat",
    request: {
        requestId,
        workspace: `fuzz-${requestId}`,
        messages: [{ role: "user", content: "Hi" }],
        sampling: { temperature: 0, maxTokens: 2 }
    }
});

const call = (callId: string, method: unknown, params: unknown): Record<string, unknown> => ({ type: "call", callId, method, params });

function nested(depth: number): unknown {
    let value: unknown = { role: "user", content: "bottom" };
    for (let level = 0; level < depth; level++) {
        value = level % 2 === 0 ? [value] : { inner: value };
    }
    return value;
}

/** Hand-picked garbage: each kind of malformed message a confused or hostile sender could produce. */
function handPicked(): unknown[] {
    const huge = "z".repeat(turnLimits.maxMessageChars + 1);
    return [
        // not objects
        null,
        0,
        -1.5,
        "chat",
        "",
        true,
        false,
        [],
        [validChat("in-a-list")],
        "x".repeat(1_000_000),
        // unknown or missing types
        {},
        { type: null },
        { type: 7 },
        { type: "CHAT" },
        { type: "launch", requestId: "x" },
        { type: "__proto__" },
        { type: "t".repeat(1_000_000) },
        // chat: missing and wrong fields, each answerable by its requestId
        { type: "chat" },
        { type: "chat", request: null },
        { type: "chat", request: "hello" },
        { type: "chat", request: { requestId: "hand-1" } },
        { type: "chat", request: { ...(validChat("hand-2").request as object), workspace: 42 } },
        { type: "chat", request: { ...(validChat("hand-3").request as object), messages: [] } },
        { type: "chat", request: { ...(validChat("hand-4").request as object), messages: [{ role: "root", content: "x" }] } },
        { type: "chat", request: { ...(validChat("hand-5").request as object), sampling: { temperature: -1, maxTokens: 2 } } },
        { type: "chat", request: { ...(validChat("hand-6").request as object), sampling: { temperature: 0, maxTokens: 0 } } },
        { type: "chat", request: { ...(validChat("hand-7").request as object), sampling: { temperature: 0, maxTokens: 2, stop: [1, 2] } } },
        { type: "chat", request: { ...(validChat("hand-8").request as object), sampling: { temperature: "0", maxTokens: "2" } } },
        // oversized: one message over its limit; an id too long to answer to. (A whole conversation over the
        // RPC's total is refused where it enters the host, by the RPC spec: the engine trusts its host for that.)
        { type: "chat", request: { ...(validChat("hand-9").request as object), messages: [{ role: "user", content: huge }] } },
        { type: "chat", request: { ...(validChat("x").request as object), requestId: "r".repeat(100_000) } },
        // nested garbage
        { type: "chat", request: { ...(validChat("hand-11").request as object), messages: [nested(2_000)] } },
        { type: "chat", request: { ...(validChat("hand-12").request as object), sampling: nested(500) } },
        { type: "chat", request: nested(1_000) },
        // unknown fields are dropped, and the command runs
        {
            ...validChat("hand-13"),
            extra: nested(50),
            request: { ...(validChat("hand-13").request as object), functions: [{ name: "rm" }] }
        },
        // calls: an envelope the engine cannot read is answered by callId, or dropped when that cannot be read either;
        // params the host never checked (a host bug) cost an answer with an error, never the process
        call("hand-m1", "measure", undefined),
        call("hand-m2", "measure", { workspace: "w", messages: "x", draft: "" }),
        call("hand-m3", "measure", { workspace: "w", messages: [{ role: 7 }], draft: 42 }),
        { type: "call", callId: 5, method: "measure", params: { workspace: "w", messages: [], draft: "" } },
        call("hand-m4", "measure", { workspace: "w", messages: [{ role: "assistant", content: "Hello" }], draft: "next" }),
        { type: "call", method: "snapshot", params: {} },
        { type: "call", callId: ["hand-s0"], method: "snapshot", params: {} },
        { ...call("hand-s1", "snapshot", {}), junk: true },
        call("hand-f1", "forgetWorkspace", {}),
        call("hand-f2", "forgetWorkspace", { workspace: "never-seen" }),
        // methods the engine does not serve: the host's own, a turn, the prototype's, none
        call("hand-x1", "inspectModel", { path: "/etc/passwd" }),
        call("hand-x2", "chat", validChat("hand-x2").request),
        call("hand-x3", "__proto__", {}),
        call("hand-x4", undefined, {}),
        // the old protocol's commands, one per call type: unknown types now, dropped with a log line
        { type: "measure", callId: "old-m", workspace: "w", messages: [], draft: "" },
        { type: "snapshot", callId: "old-s" },
        // isolation calls: well-formed ones answered (a replay of nothing, a drill nobody listed, with their codes)
        call("hand-a1", "audit", { scanFreePages: false }),
        { type: "call", callId: { id: "hand-a0" }, method: "audit", params: {} },
        call("hand-t1", "replayableTurns", {}),
        call("hand-l1", "listDrills", {}),
        call("hand-r1", "replay", null),
        call("hand-r2", "replay", { requestId: "r".repeat(100_000) }),
        call("hand-r3", "replay", { requestId: "never-served" }),
        call("hand-d1", "runDrill", {}),
        call("hand-d2", "runDrill", { id: nested(100) }),
        call("hand-d3", "runDrill", { id: "no-such-drill" }),
        // cancels of nothing, and malformed cancels
        { type: "cancel" },
        { type: "cancel", requestId: "no-such-request" },
        { type: "cancel", requestId: { id: 1 } }
    ];
}

/** Generated garbage: arbitrary JSON, and a valid chat with one field replaced by arbitrary JSON. */
function generated(): unknown[] {
    const paths = [
        ["type"],
        ["request"],
        ["request", "workspace"],
        ["request", "messages"],
        ["request", "messages", 0],
        ["request", "messages", 0, "role"],
        ["request", "messages", 0, "content"],
        ["request", "sampling"],
        ["request", "sampling", "maxTokens"],
        ["request", "sampling", "temperature"],
        ["request", "sampling", "topK"],
        ["request", "sampling", "stop"]
    ] as const;
    const mutations = fc
        .sample(fc.tuple(fc.constantFrom(...paths), fc.jsonValue()), { numRuns: 150, seed: 0x6b76 })
        .map(([path, replacement], index) => {
            const command = structuredClone(validChat(`gen-${index}`)) as Record<string | number, unknown>;
            let target = command;
            for (const key of path.slice(0, -1)) {
                target = target[key] as Record<string | number, unknown>;
            }
            target[path.at(-1)!] = replacement;
            return command;
        });
    const callPaths = [["callId"], ["method"], ["params"], ["params", "workspace"], ["params", "messages"], ["params", "draft"]] as const;
    const callMutations = fc
        .sample(fc.tuple(fc.constantFrom(...callPaths), fc.jsonValue()), { numRuns: 100, seed: 0x6b78 })
        .map(([path, replacement], index) => {
            const command = call(`gen-call-${index}`, "measure", { workspace: "w", messages: [], draft: "hi" }) as Record<string, unknown>;
            const target = (path.length === 1 ? command : command.params) as Record<string, unknown>;
            target[path.at(-1)!] = replacement;
            return command;
        });
    return [...fc.sample(fc.jsonValue(), { numRuns: 150, seed: 0x6b77 }), ...mutations, ...callMutations];
}

/** The event the engine must send back for `message`, predicted by the same pure parser, or undefined for none. */
function expectedAnswer(
    message: unknown
): { readonly id: string; readonly types: readonly string[]; readonly error?: { code: string; message: string } } | undefined {
    const parsed = parseEngineCommand(JSON.parse(JSON.stringify(message)));
    if (!parsed.ok) {
        const reply = parsed.reply;
        if (reply === undefined) {
            return undefined;
        }
        return {
            id: reply.type === "failed" ? reply.requestId : (reply as { callId: string }).callId,
            types: [reply.type],
            error: parsed.error
        };
    }
    const { command } = parsed;
    switch (command.type) {
        case "chat":
            return { id: command.request.requestId, types: ["finished", "failed"] };
        case "call":
            return { id: command.callId, types: ["answer"] };
        default:
            return undefined;
    }
}

describe("malformed commands sent raw to the engine process", () => {
    let supervisor: EngineSupervisor | undefined;
    const spawner = new RecordingSpawner({ quiet: true });
    afterAll(async () => {
        await supervisor?.dispose();
    });

    it("never crash or wedge it: each is answered as the parser says or dropped, and a normal chat works afterwards", async () => {
        supervisor = await EngineSupervisor.start(tinyProcessConfig, { spawner });
        const crashes: unknown[] = [];
        supervisor.on("crashed", (event) => crashes.push(event));
        const child = spawner.processes[0]!;
        const pid = child.pid!;
        const received = spawner.received.get(child)!;

        const messages = [...handPicked(), ...generated()].filter((message) => {
            const parsed = parseEngineCommand(JSON.parse(JSON.stringify(message)));
            return !(parsed.ok && parsed.command.type === "shutdown"); // a well-formed shutdown is not garbage
        });
        const numRefused = messages.filter((message) => !parseEngineCommand(JSON.parse(JSON.stringify(message))).ok).length;
        const expectations = messages.map(expectedAnswer).filter((answer) => answer !== undefined);
        const idCounts = new Map<string, number>();
        for (const { id } of expectations) {
            idCounts.set(id, (idCounts.get(id) ?? 0) + 1);
        }
        // An id sent twice at once is ambiguous (the engine answers a duplicate running chat with nothing); wait only for unique ones.
        const awaited = expectations.filter(({ id }) => idCounts.get(id) === 1);
        expect(awaited.length).toBeGreaterThan(200);
        expect(awaited.filter((answer) => answer.error !== undefined).length).toBeGreaterThan(10);

        for (const message of messages) {
            child.send(message as EngineCommand);
        }

        const answerOf = (id: string, types: readonly string[]): Record<string, unknown> | undefined =>
            received.find((event): event is Record<string, unknown> => {
                const record = event as Record<string, unknown>;
                return types.includes(record.type as string) && (record.requestId === id || record.callId === id);
            });
        await waitUntil(
            () => awaited.every(({ id, types }) => answerOf(id, types) !== undefined),
            90_000,
            `answers to ${awaited.length} commands (${awaited
                .filter(({ id, types }) => answerOf(id, types) === undefined)
                .map(({ id }) => id)
                .slice(0, 5)
                .join(", ")} … missing)`
        );
        for (const { id, types, error } of awaited) {
            if (error !== undefined) {
                expect(answerOf(id, types)!.error, id).toEqual(error);
            }
        }
        const numAnsweredWithErrors = awaited.filter(({ id, types }) => answerOf(id, types)!.error !== undefined).length;
        expect(numAnsweredWithErrors, "answers that carry an error").toBeGreaterThan(100);
        expect(answerOf("hand-13", ["finished"]), "unknown fields are dropped, not refused").toBeDefined();
        expect(answerOf("hand-m1", ["answer"])!.error).toMatchObject({ code: "engine_internal_error" });
        expect(answerOf("hand-m4", ["answer"])!.result).toMatchObject({ workspace: "w", fits: true });
        expect(answerOf("hand-f2", ["answer"])!.error).toBeUndefined();
        expect(answerOf("hand-x1", ["answer"])!.error).toMatchObject({
            code: "invalid_request",
            message: expect.stringMatching(/the engine serves measure, snapshot/)
        });
        expect(answerOf("hand-a1", ["answer"])!.result).toMatchObject({ ok: true, numViolations: 0 });
        expect(answerOf("hand-l1", ["answer"])!.result).toHaveLength(7);
        expect(answerOf("hand-r3", ["answer"])!.error).toMatchObject({ code: "replay_unavailable" });
        expect(answerOf("hand-d3", ["answer"])!.error).toMatchObject({ code: "unknown_drill" });
        // Every refusal, answered or not, left one bounded line on the engine's stderr (a pipe of its own: it may lag the answers).
        const refusalLines = (): string[] =>
            spawner.stderr.split("\n").filter((line) => line.startsWith(`[kvault engine ${pid}] refused a command: `));
        await waitUntil(() => refusalLines().length >= numRefused, 10_000, `${numRefused} refusal lines on stderr`);
        const refusals = refusalLines();
        expect(refusals).toHaveLength(numRefused);
        expect(Math.max(...refusals.map((line) => line.length))).toBeLessThan(700);

        // Still the same process, never restarted, and not wedged: a normal turn is served.
        expect(crashes).toEqual([]);
        expect(isProcessAlive(pid)).toBe(true);
        expect(supervisor.pid).toBe(pid);
        expect(supervisor.state).toBe("running");
        const result = await new Conversation("after-fuzz").turn(supervisor, "Still there?");
        expect(result.usage.completionTokens).toBe(6);
        expect(result.text.length).toBeGreaterThan(0);
        const snapshot = await supervisor.call("snapshot", {});
        expect(snapshot.numQueued).toBe(0);
        expect(snapshot.workspaces.every((usage) => !usage.running)).toBe(true);

        await supervisor.dispose();
        expectNoEngineLeft(spawner.pids);
        expect(spawner.pids).toEqual([pid]);
    });
});
