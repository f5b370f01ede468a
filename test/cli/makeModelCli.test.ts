import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot } from "../support/generatedModels.js";

const run = promisify(execFile);

/** Runs the CLI exactly as `npm run make-model -- ...` does, and never throws on a non-zero exit. */
async function makeModel(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
        const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "synthetic/model/makeModelCli.ts", ...args], {
            cwd: repositoryRoot
        });
        return { code: 0, stdout, stderr };
    } catch (error) {
        const failed = error as { code: number; stdout: string; stderr: string };
        return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
}

async function sha256(filePath: string): Promise<string> {
    const hash = crypto.createHash("sha256");
    for await (const chunk of fs.createReadStream(filePath)) {
        hash.update(chunk as Buffer);
    }
    return hash.digest("hex");
}

describe("npm run make-model", () => {
    let directory: string;
    beforeAll(() => {
        directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-make-model-"));
    });
    afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

    it.each(["tiny", "small"])(
        "writes byte-identical files for preset %s, run after run",
        async (preset) => {
            const first = path.join(directory, `${preset}-a.gguf`);
            const second = path.join(directory, `${preset}-b.gguf`);
            const results = [await makeModel(preset, first), await makeModel(preset, second)];
            for (const result of results) {
                expect(result.code, result.stderr).toBe(0);
                expect(result.stdout).toMatch(new RegExp(`preset ${preset}, [\\d,]+ parameters`));
            }
            expect(fs.statSync(first).size).toBe(fs.statSync(second).size);
            expect(await sha256(first)).toBe(await sha256(second));
            if (preset === "tiny") {
                expect(fs.statSync(first).size).toBeLessThan(1024 * 1024);
            }
            fs.rmSync(first);
            fs.rmSync(second);
        },
        60_000
    );

    it("rejects an unknown preset with the list of presets and exit code 2, writing nothing", async () => {
        const outPath = path.join(directory, "huge.gguf");
        const result = await makeModel("huge", outPath);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain('Unknown model preset "huge". Choose one of: tiny, small, 1b, llama3-tiny, llama3-1b, ');
        expect(fs.readdirSync(directory)).toEqual([]);
    });

    it("writes a preset quantized with --quant, and rejects an unknown quantisation with the list", async () => {
        const outPath = path.join(directory, "tiny-q8_0.gguf");
        const written = await makeModel("tiny", outPath, "--quant", "q8_0");
        expect(written.code, written.stderr).toBe(0);
        expect(written.stdout).toMatch(/preset tiny \(q8_0\), [\d,]+ parameters/);
        // Q8_0 is 34 bytes per 32 weights, F16 64: the weights take about half the room
        expect(fs.statSync(outPath).size).toBeLessThan(600 * 1024);
        fs.rmSync(outPath);

        const refused = await makeModel("tiny", path.join(directory, "tiny-q9.gguf"), "--quant", "q9");
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('Unknown quantisation "q9". Choose one of: f16, q8_0, q4_0, q4_k.');
        expect(fs.readdirSync(directory)).toEqual([]);
    }, 60_000);

    it("lists every preset with its architecture, parameters, vocabulary and file size per quantisation", async () => {
        const result = await makeModel("--list");
        expect(result.code, result.stderr).toBe(0);
        const lines = result.stdout.split("\n");
        expect(lines[0]).toMatch(/^Preset\s+Architecture\s+Parameters\s+Vocabulary\s+F16\s+Q8_0\s+Q4_0\s+Q4_K_S$/);
        expect(lines).toContainEqual(expect.stringMatching(/^tiny\s+llama\s+427k\s+512\s+0\.9 MB\s+0\.5 MB\s+0\.3 MB\s+0\.3 MB$/));
        expect(lines).toContainEqual(
            expect.stringMatching(/^qwen3-0\.6b\s+qwen3\s+596\.0M\s+151,936\s+1198 MB\s+639 MB\s+341 MB\s+341 MB$/)
        );
        expect(lines).toContainEqual(expect.stringMatching(/^gemma3-tiny\s+gemma3\s+[\d.]+M\s+262,144\s/));
        for (const family of ["llama3", "qwen2", "qwen3", "phi3", "gemma3", "mistral"]) {
            expect(lines.filter((line) => line.startsWith(`${family}-`))).toHaveLength(2);
        }
    }, 60_000);

    it("prints usage and exits 2 without arguments", async () => {
        const result = await makeModel();
        expect(result.code).toBe(2);
        expect(result.stderr).toContain("Usage: npm run make-model -- <preset> <out.gguf>");
    });

    // Tests run as root in CI, where permission bits do not stop a write; a missing directory and a
    // parent that is a file stop everyone.
    it.each([
        ["a directory that does not exist", (dir: string) => path.join(dir, "missing", "tiny.gguf")],
        [
            "a parent that is a file",
            (dir: string) => {
                fs.writeFileSync(path.join(dir, "plain-file"), "not a directory");
                return path.join(dir, "plain-file", "tiny.gguf");
            }
        ]
    ])("fails clearly for %s and leaves no partial file", async (_, makePath) => {
        const before = new Set(fs.readdirSync(directory));
        const outPath = makePath(directory);
        const result = await makeModel("tiny", outPath);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`make-model: Cannot write the model to ${outPath}`);
        expect(result.stderr).toContain("Choose a path in a directory you can write to.");
        expect(fs.existsSync(outPath)).toBe(false);
        const leftovers = fs.readdirSync(directory).filter((name) => !before.has(name) && name !== "plain-file");
        expect(leftovers).toEqual([]);
        fs.rmSync(path.join(directory, "plain-file"), { force: true });
    });
});
