import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { eventsOfEngineMessage, type ChatMessage, type ChatTurnRequest, type SamplingParams } from "../../../contract/engineProtocol.js";
import type { EngineConfigInput } from "../../../engine/EngineConfig.js";
import type { EngineChildProcess, EngineProcessSpawner } from "../../../host/supervisor/EngineProcessSpawner.js";
import { forkEngineSpawner } from "../../../host/supervisor/forkEngineProcess.js";
import type { TurnListener, TurnResult } from "../../../engine/service/EngineService.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { isProcessAlive } from "../../../engine/runtime/PrivateStateDirectory.js";

/** The tiny model on the CPU: what every engine process in these tests loads. */
export const tinyProcessConfig: EngineConfigInput = { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false };

export const GREEDY: SamplingParams = { temperature: 0, maxTokens: 6 };

/** EngineService and EngineSupervisor alike: the one call a conversation needs. */
export interface ChatEngine {
    chat(request: ChatTurnRequest, listener?: TurnListener, signal?: AbortSignal): Promise<TurnResult>;
}

let numRequests = 0;

/** A workspace's history as a host keeps it: a turn that failed leaves it unchanged, so it can be sent again. */
export class Conversation {
    readonly messages: ChatMessage[] = [];

    constructor(readonly workspace: string) {}

    request(userText: string, sampling: SamplingParams = GREEDY): ChatTurnRequest {
        return {
            requestId: `${this.workspace}-${++numRequests}`,
            workspace: this.workspace,
            messages: [...this.messages, { role: "user", content: userText }],
            sampling
        };
    }

    async turn(
        engine: ChatEngine,
        userText: string,
        options: { sampling?: SamplingParams; listener?: TurnListener } = {}
    ): Promise<TurnResult> {
        const result = await engine.chat(this.request(userText, options.sampling), options.listener);
        this.messages.push({ role: "user", content: userText }, { role: "assistant", content: result.text });
        return result;
    }
}

/** The default fork spawner, keeping every process it started and every message each sent, for the test to inspect. */
export class RecordingSpawner implements EngineProcessSpawner {
    readonly processes: EngineChildProcess[] = [];
    /** Engine → host messages, by process, in order. */
    readonly received = new Map<EngineChildProcess, unknown[]>();
    /** What the processes wrote to stderr, when `quiet`; otherwise it goes to the test's stderr. */
    stderr = "";
    readonly #inner: EngineProcessSpawner;

    constructor(options: { quiet?: boolean } = {}) {
        this.#inner = forkEngineSpawner(
            options.quiet
                ? {
                      onStderr: (chunk) => {
                          this.stderr += chunk;
                      }
                  }
                : {}
        );
    }

    spawnEngineProcess(config: EngineConfigInput): EngineChildProcess {
        const child = this.#inner.spawnEngineProcess(config);
        const received: unknown[] = [];
        this.received.set(child, received);
        child.on("message", (message) => received.push(...eventsOfEngineMessage(message)));
        this.processes.push(child);
        return child;
    }

    get pids(): number[] {
        return this.processes.map((child) => child.pid).filter((pid): pid is number => pid !== undefined);
    }
}

export { isProcessAlive };

/** State directories an engine process created (PrivateStateDirectory names them by pid). */
export function stateDirectoriesOf(pid: number): string[] {
    const roots = [...new Set(["/dev/shm", os.tmpdir()])].filter((root) => fs.existsSync(root));
    return roots.flatMap((root) =>
        fs
            .readdirSync(root)
            .filter((name) => name.startsWith(`kvault-state-${pid}-`))
            .map((name) => path.join(root, name))
    );
}

/** No orphans: every engine process the test started is gone, and so is its state directory. */
export function expectNoEngineLeft(pids: readonly number[]): void {
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
        expect(isProcessAlive(pid), `engine process ${pid} is still running`).toBe(false);
        expect(stateDirectoriesOf(pid), `engine process ${pid} left its state directory`).toEqual([]);
    }
}

/** Polls `condition` until it holds; fails with `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition()) {
        if (performance.now() > deadline) {
            throw new Error(`Waited ${timeoutMs} ms for ${what}.`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}
