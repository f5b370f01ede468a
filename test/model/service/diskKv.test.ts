import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfigInput } from "../../../engine/index.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { EngineService, type TurnResult } from "../../../engine/service/EngineService.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { ensureQuantizedModel, generatedModelPath } from "../../support/generatedModels.js";

// A workspace that keeps its KV on disk, across engine restarts: resumed without prefilling its
// history, and every file that does not match refused, deleted and recomputed.

const NUM_TURNS = 3;
const SECRET = "the vault combination is 7319";

let numRequests = 0;

/** A raw-text chat: each turn appends the last answer and a new line, so both a kept and a recomputed KV see the same tokens. */
function promptOf(turn: number, answers: readonly string[]): string {
    let text = `System: remember that ${SECRET}.\n`;
    for (let index = 0; index <= turn; index++) {
        text += `User: question ${index + 1} about pages and sequences, in some detail\nAssistant:`;
        if (index < turn) {
            text += `${answers[index]}\n`;
        }
    }
    return text;
}

async function turn(service: EngineService, workspace: string, text: string, keepKvOnDisk: boolean): Promise<TurnResult> {
    return service.chat({
        requestId: `disk-${++numRequests}`,
        workspace,
        messages: [],
        prompt: { text },
        sampling: { temperature: 0, maxTokens: 8 },
        keepKvOnDisk
    });
}

describe("a workspace's KV kept on disk", () => {
    let runtime: LlamaRuntime;
    let directory: string;
    const key = crypto.randomBytes(32).toString("base64");
    const start = (overrides: Partial<EngineConfigInput> = {}, modelPath = generatedModelPath("tiny")): Promise<EngineService> =>
        EngineService.start(
            {
                modelPath,
                ...tinyEngineConfig,
                window: 512,
                prefillContextSize: 512,
                decodeContextSize: 512,
                numPages: 128,
                inPlacePrefillTokens: 16,
                kvDisk: { directory, key },
                ...overrides
            },
            { runtime }
        );
    const fileOf = (workspace: string): string =>
        path.join(directory, `${crypto.createHash("sha256").update(workspace, "utf8").digest("hex").slice(0, 32)}.kvstate`);

    /** The answers of a chat never restarted, with what each turn prefilled. */
    let oracle: { answers: string[]; evaluated: number[]; promptTokens: number[] };

    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-disk-kv-"));
        const service = await start({ kvDisk: undefined });
        try {
            oracle = { answers: [], evaluated: [], promptTokens: [] };
            for (let index = 0; index < NUM_TURNS; index++) {
                const result = await turn(service, "oracle", promptOf(index, oracle.answers), false);
                oracle.answers.push(result.text);
                oracle.evaluated.push(result.usage.evaluatedPromptTokens);
                oracle.promptTokens.push(result.usage.promptTokens);
            }
        } finally {
            await service.dispose();
        }
    });
    afterAll(async () => {
        await runtime.dispose();
        fs.rmSync(directory, { recursive: true, force: true });
    });

    /** Runs turns 1 and 2 of `workspace` with its KV kept on disk, then stops the engine; the file is there. */
    async function chatThenStop(workspace: string, overrides: Partial<EngineConfigInput> = {}, modelPath?: string): Promise<string> {
        const service = await start(overrides, modelPath);
        try {
            for (let index = 0; index < NUM_TURNS - 1; index++) {
                const result = await turn(service, workspace, promptOf(index, oracle.answers), true);
                expect(result.text).toBe(oracle.answers[index]);
            }
            return fileOf(workspace);
        } finally {
            await service.dispose(); // waits for the last turn's write
        }
    }

    it("resumes after a restart without prefilling the history: the same greedy answer, only the new tokens evaluated, no text in clear", async () => {
        const file = await chatThenStop("resumed");
        expect(fs.existsSync(file)).toBe(true);
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
        const bytes = fs.readFileSync(file);
        expect(bytes.includes(Buffer.from(SECRET))).toBe(false);
        expect(bytes.includes(Buffer.from("vault"))).toBe(false);

        const service = await start();
        try {
            const result = await turn(service, "resumed", promptOf(NUM_TURNS - 1, oracle.answers), true);
            expect(result.text).toBe(oracle.answers[NUM_TURNS - 1]);
            expect(result.usage.restoredFromDiskTokens).toBeGreaterThan(0);
            expect(result.usage.diskKvRefused).toBeUndefined();
            // what the never-restarted chat evaluated on this turn, and far less than the whole history
            expect(result.usage.evaluatedPromptTokens).toBe(oracle.evaluated[NUM_TURNS - 1]);
            expect(result.usage.evaluatedPromptTokens).toBeLessThan(result.usage.promptTokens / 2);
            await service.engine.diskKvWritten();
            await expectEngineClean(service.engine);
        } finally {
            await service.dispose();
        }
    });

    const refusals: {
        readonly name: string;
        readonly damage: (file: string) => void;
        readonly restart?: Partial<EngineConfigInput>;
        readonly model?: () => string;
        readonly reason: RegExp;
    }[] = [
        { name: "another model", damage: () => undefined, model: () => ensureQuantizedModel("tiny", "q8_0"), reason: /model file/ },
        { name: "another setting (page size)", damage: () => undefined, restart: { pageTokens: 32 }, reason: /page size in tokens 16.*32/ },
        {
            name: "another setting (KV type)",
            damage: () => undefined,
            restart: { kvCacheType: "q8_0" },
            reason: /model file|KV layout|KV cache type/
        },
        {
            name: "a torn file",
            damage: (file) => fs.truncateSync(file, fs.statSync(file).size - 1000),
            reason: /torn/
        },
        {
            name: "a flipped byte",
            damage: (file) => {
                const bytes = fs.readFileSync(file);
                bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
                fs.writeFileSync(file, bytes);
            },
            reason: /authentication tag/
        }
    ];
    for (const refusal of refusals) {
        it(`refuses, deletes and recomputes a state from ${refusal.name}`, async () => {
            const workspace = `refused-${refusals.indexOf(refusal)}`;
            const file = await chatThenStop(workspace);
            refusal.damage(file);
            const damaged = fs.readFileSync(file);

            const service = await start(refusal.restart, refusal.model?.());
            try {
                const result = await turn(service, workspace, promptOf(NUM_TURNS - 1, oracle.answers), true);
                expect(result.usage.diskKvRefused).toMatch(refusal.reason);
                expect(result.usage.restoredFromDiskTokens).toBeUndefined();
                expect(result.usage.evaluatedPromptTokens).toBe(result.usage.promptTokens); // the whole history again
                if (refusal.model === undefined) {
                    expect(result.text).toBe(oracle.answers[NUM_TURNS - 1]);
                }
                await service.engine.diskKvWritten();
                await expectEngineClean(service.engine);
            } finally {
                await service.dispose();
            }
            // the refused file was deleted; the one there now is this engine's own, written after the turn
            expect(fs.readFileSync(file).equals(damaged)).toBe(false);
        });
    }

    it("never loads one workspace's file into another: a file put in another's place fails its tag", async () => {
        const file = await chatThenStop("owner");
        const service = await start();
        try {
            const intruderFile = fileOf("intruder");
            fs.copyFileSync(file, intruderFile);
            const result = await turn(service, "intruder", promptOf(NUM_TURNS - 1, oracle.answers), true);
            expect(result.usage.diskKvRefused).toMatch(/another workspace/);
            expect(result.usage.evaluatedPromptTokens).toBe(result.usage.promptTokens);
        } finally {
            await service.dispose();
        }
    });

    it("deletes the file with the workspace", async () => {
        const file = await chatThenStop("deleted");
        const service = await start();
        try {
            await turn(service, "deleted", promptOf(NUM_TURNS - 1, oracle.answers), true);
            await service.forgetWorkspace("deleted");
            expect(fs.existsSync(file)).toBe(false);
        } finally {
            await service.dispose();
        }
    });
});
