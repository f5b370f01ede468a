import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { EngineCommand } from "../../../contract/engineProtocol.js";
import { EngineSupervisor } from "../../../host/supervisor/EngineSupervisor.js";
import { parseEngineCommand } from "../../../engine/process/parseEngineCommand.js";
import { turnLimits } from "../../../engine/service/validateChatTurn.js";
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
    const big = "b".repeat(turnLimits.maxMessageChars);
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
        // oversized: one message over its limit; a conversation over the total; an id too long to answer to
        { type: "chat", request: { ...(validChat("hand-9").request as object), messages: [{ role: "user", content: huge }] } },
        {
            type: "chat",
            request: {
                ...(validChat("hand-10").request as object),
                messages: [...Array.from({ length: 4 }, () => ({ role: "user", content: big })), { role: "user", content: "?" }]
            }
        },
        { type: "chat", request: { ...(validChat("x").request as object), requestId: "r".repeat(100_000) } },
        // nested garbage
        { type: "chat", request: { ...(validChat("hand-11").request as object), messages: [nested(2_000)] } },
        { type: "chat", request: { ...(validChat("hand-12").request as object), sampling: nested(500) } },
        { type: "chat", request: nested(1_000) },
        // unknown fields are dropped, and the command runs
        { ...validChat("hand-13"), extra: nested(50), request: { ...(validChat("hand-13").request as object), tools: [{ name: "rm" }] } },
        // calls: malformed ones answered by callId, or dropped when it cannot be read
        { type: "measure", callId: "hand-m1" },
        { type: "measure", callId: "hand-m2", workspace: "w", messages: "x", draft: "" },
        { type: "measure", callId: "hand-m3", workspace: "w", messages: [], draft: huge },
        { type: "measure", callId: 5, workspace: "w", messages: [], draft: "" },
        { type: "measure", callId: "hand-m4", workspace: "w", messages: [{ role: "assistant", content: "Hello" }], draft: "next" },
        { type: "snapshot" },
        { type: "snapshot", callId: ["hand-s0"] },
        { type: "snapshot", callId: "hand-s1", junk: true },
        { type: "forgetWorkspace", callId: "hand-f1" },
        { type: "forgetWorkspace", callId: "hand-f2", workspace: "never-seen" },
        // isolation calls: malformed ones answered by callId; well-formed ones answered (a replay of nothing, a drill nobody listed, with their codes)
        { type: "audit", callId: "hand-a1", scanFreePages: false },
        { type: "audit", callId: { id: "hand-a0" } },
        { type: "replayableTurns", callId: "hand-t1" },
        { type: "listDrills", callId: "hand-l1" },
        { type: "replay", callId: "hand-r1" },
        { type: "replay", callId: "hand-r2", requestId: "r".repeat(100_000) },
        { type: "replay", callId: "hand-r3", requestId: "never-served" },
        { type: "runDrill", callId: "hand-d1" },
        { type: "runDrill", callId: "hand-d2", drillId: nested(100) },
        { type: "runDrill", callId: "hand-d3", drillId: "no-such-drill" },
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
    return [...fc.sample(fc.jsonValue(), { numRuns: 150, seed: 0x6b77 }), ...mutations];
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
        case "measure":
            return { id: command.callId, types: ["measured"] };
        case "snapshot":
            return { id: command.callId, types: ["snapshot"] };
        case "forgetWorkspace":
            return { id: command.callId, types: ["forgotten"] };
        case "audit":
            return { id: command.callId, types: ["audited"] };
        case "replayableTurns":
            return { id: command.callId, types: ["replayableTurns"] };
        case "replay":
            return { id: command.callId, types: ["replayed"] };
        case "listDrills":
            return { id: command.callId, types: ["drills"] };
        case "runDrill":
            return { id: command.callId, types: ["drillReport"] };
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
        supervisor = await EngineSupervisor.start(tinyProcessConfig, { spawner, callTimeoutMs: 60_000 });
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
        expect(awaited.length).toBeGreaterThan(100);
        expect(awaited.filter((answer) => answer.error !== undefined).length).toBeGreaterThan(50);

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
        expect(answerOf("hand-13", ["finished"]), "unknown fields are dropped, not refused").toBeDefined();
        expect(answerOf("hand-m4", ["measured"])!.result).toMatchObject({ workspace: "w", fits: true });
        expect(answerOf("hand-f2", ["forgotten"])!.error).toBeUndefined();
        expect(answerOf("hand-a1", ["audited"])!.result).toMatchObject({ ok: true, numViolations: 0 });
        expect(answerOf("hand-l1", ["drills"])!.result).toHaveLength(7);
        expect(answerOf("hand-r3", ["replayed"])!.error).toMatchObject({ code: "replay_unavailable" });
        expect(answerOf("hand-d3", ["drillReport"])!.error).toMatchObject({ code: "unknown_drill" });
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
        const snapshot = await supervisor.snapshot();
        expect(snapshot.numQueued).toBe(0);
        expect(snapshot.workspaces.every((usage) => !usage.running)).toBe(true);

        await supervisor.dispose();
        expectNoEngineLeft(spawner.pids);
        expect(spawner.pids).toEqual([pid]);
    });
});
