import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { defaultWorkspaceSettings, type WorkspaceMeta } from "../../../../contract/workspaces.js";
import { listening, RpcSocket, smallEngineArgs, startServe, stopServe, type ServeProcess } from "../../../cli/serveProcess.js";
import { ensureGeneratedModel, generatedModelPath } from "../../../support/generatedModels.js";
import { ensureChunkedModel } from "../../../support/modelFileServer.js";

const API_KEY = "models-on-disk-key-1";
/** Long enough that a model loaded by one request is still loaded for the next few on a busy machine. */
const IDLE_SECONDS = 8;
/** Each test starts servers and engines on generated models: minutes on two shared cores. */
const TEST_TIMEOUT_MS = 400_000;
const LM_STUDIO_ID = "lmstudio-community/Tiny-GGUF/Tiny-F16.gguf";
const OLLAMA_ID = "tiny:0.6b";
const HF_ID = "kvault/tiny-40-layers-GGUF/tiny-40-layers.gguf";
/** A model whose plan alone is far above the budgets these tests give: the 125M-parameter preset, 238 MiB of weights. */
const LARGE_ID = "small-v1";

interface Layout {
    readonly home: string;
    readonly lmStudio: string;
    readonly ollamaBlob: string;
    readonly hf: string;
    /** A folder given with --models-folder, holding a link to the large model. */
    readonly folder: string;
}

/**
 * A home directory laid out as the three apps lay out their models, with generated GGUF files in
 * them: LM Studio's `~/.lmstudio/models/<publisher>/<model>/<file>`, Ollama's manifest and
 * `sha256-` blob, Hugging Face's snapshot linking into its blobs.
 */
function layOut(): Layout {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-disk-home-"));
    const lmStudio = path.join(home, ".lmstudio/models/lmstudio-community/Tiny-GGUF/Tiny-F16.gguf");
    fs.mkdirSync(path.dirname(lmStudio), { recursive: true });
    fs.copyFileSync(ensureGeneratedModel("tiny"), lmStudio);

    const ollamaRoot = path.join(home, ".ollama/models");
    const blobBytes = fs.readFileSync(ensureGeneratedModel("tiny"));
    const digest = crypto.createHash("sha256").update(blobBytes).digest("hex");
    const ollamaBlob = path.join(ollamaRoot, "blobs", `sha256-${digest}`);
    fs.mkdirSync(path.dirname(ollamaBlob), { recursive: true });
    fs.writeFileSync(ollamaBlob, blobBytes);
    const manifest = path.join(ollamaRoot, "manifests/registry.ollama.ai/library/tiny/0.6b");
    fs.mkdirSync(path.dirname(manifest), { recursive: true });
    fs.writeFileSync(
        manifest,
        JSON.stringify({
            schemaVersion: 2,
            mediaType: "application/vnd.docker.distribution.manifest.v2+json",
            layers: [{ mediaType: "application/vnd.ollama.image.model", digest: `sha256:${digest}`, size: blobBytes.length }]
        })
    );

    const repository = path.join(home, ".cache/huggingface/hub/models--kvault--tiny-40-layers-GGUF");
    const hfBlob = path.join(repository, "blobs", "5d1f0c2e");
    fs.mkdirSync(path.dirname(hfBlob), { recursive: true });
    fs.copyFileSync(ensureChunkedModel(), hfBlob);
    const hf = path.join(repository, "snapshots", "0123456789abcdef", "tiny-40-layers.gguf");
    fs.mkdirSync(path.dirname(hf), { recursive: true });
    fs.symlinkSync(hfBlob, hf);
    fs.mkdirSync(path.join(repository, "refs"));
    fs.writeFileSync(path.join(repository, "refs", "main"), "0123456789abcdef");

    const folder = path.join(home, "my-models");
    fs.mkdirSync(folder);
    fs.symlinkSync(ensureGeneratedModel("small"), path.join(folder, "small-v1.gguf"));
    return { home, lmStudio, ollamaBlob, hf, folder };
}

describe("models found on disk, used in place, and several loaded at once (headless API)", () => {
    let server: ServeProcess | undefined;
    const directories: string[] = [];
    afterEach(async () => {
        if (server !== undefined) {
            await stopServe(server);
            server = undefined;
        }
        for (const directory of directories.splice(0)) {
            fs.rmSync(directory, { recursive: true, force: true });
        }
    });

    const start = async (layout: Layout, extra: readonly string[]): Promise<string> => {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-disk-data-"));
        directories.push(layout.home, dataDir);
        server = startServe(
            ["--port", "0", "--data-dir", dataDir, "--model", "tiny", ...smallEngineArgs, "--models-folder", layout.folder, ...extra],
            { KVAULT_API_KEY: API_KEY, HOME: layout.home, OLLAMA_MODELS: undefined, HF_HOME: undefined, HF_HUB_CACHE: undefined }
        );
        return listening(server);
    };
    const get = async (url: string, route: string): Promise<unknown> => {
        const response = await fetch(`${url}${route}`, { headers: { authorization: `Bearer ${API_KEY}` } });
        expect(response.status, route).toBe(200);
        return route === "/metrics" ? response.text() : response.json();
    };
    /** A chat turn's answer, its status checked against `expected` with the body in the message. */
    const chat = async (url: string, model: string, user: string, expected = 200): Promise<Response> => {
        const response = await send(url, model, user);
        expect(response.status, await response.clone().text()).toBe(expected);
        return response;
    };
    const send = (url: string, model: string, user: string): Promise<Response> =>
        fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
            body: JSON.stringify({ model, user, messages: [{ role: "user", content: `Hello from ${user}` }], max_tokens: 4 })
        });

    it(
        "lists LM Studio's, Ollama's and Hugging Face's files by their apps' names, loads two at once in place, and unloads an idle one",
        async () => {
            const layout = layOut();
            const url = await start(layout, ["--model-idle-seconds", String(IDLE_SECONDS)]);

            // before: only "tiny" was listed, and any other `model` was a 404
            const listed = (await get(url, "/v1/models")) as { data: { id: string; kvault?: Record<string, unknown> }[] };
            expect(listed.data.map((entry) => entry.id)).toEqual(["tiny", LM_STUDIO_ID, OLLAMA_ID, HF_ID, LARGE_ID]);
            const found = Object.fromEntries(listed.data.slice(1).map((entry) => [entry.id, entry.kvault]));
            expect(found[LM_STUDIO_ID]).toMatchObject({ loaded: false, source: "lmstudio", path: layout.lmStudio });
            expect(found[OLLAMA_ID]).toMatchObject({ loaded: false, source: "ollama", path: layout.ollamaBlob });
            expect(found[HF_ID]).toMatchObject({ loaded: false, source: "huggingface", path: layout.hf });

            // two workspaces on two different local models, answering at once (the server's own and LM Studio's file)
            const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY });
            const [own, lmStudio] = await Promise.all([
                openai.chat.completions.create({
                    model: "tiny",
                    user: "alpha",
                    messages: [{ role: "user", content: "Hi" }],
                    max_tokens: 4
                }),
                openai.chat.completions.create({
                    model: LM_STUDIO_ID,
                    user: "beta",
                    messages: [{ role: "user", content: "Hi" }],
                    max_tokens: 4
                })
            ]);
            expect(own.model).toBe("tiny");
            expect(lmStudio.model).toBe(LM_STUDIO_ID);
            expect(lmStudio.usage!.completion_tokens).toBeGreaterThan(0);
            expect(server!.stderr()).toContain(`Loading "${LM_STUDIO_ID}" from ${layout.lmStudio}`);
            // each loaded model's contexts in /metrics, by its name: "beta" is a workspace of LM Studio's model
            const metrics = (await get(url, "/metrics")) as string;
            expect(metrics).toMatch(/kvault_loaded_model_planned_bytes\{model="tiny",primary="true"\} \d+/);
            expect(metrics).toContain(`kvault_loaded_model_workspaces{model="${LM_STUDIO_ID}",primary="false"} 1`);

            // Ollama's blob through Ollama's client, by the name `ollama list` shows
            const ollama = new Ollama({ host: url, headers: { Authorization: `Bearer ${API_KEY}` } });
            const answer = await ollama.chat({
                model: OLLAMA_ID,
                messages: [{ role: "user", content: "Hi" }],
                options: { num_predict: 3 }
            });
            expect(answer.model).toBe(OLLAMA_ID);
            const ps = await ollama.ps();
            expect(ps.models[0]!.name).toBe("tiny");
            expect(ps.models.map((model) => model.name)).toContain(OLLAMA_ID);
            const loaded = ps.models.find((model) => model.name === OLLAMA_ID)!;
            expect(loaded.size).toBeGreaterThan(fs.statSync(layout.ollamaBlob).size); // the plan: weights, KV, pool, compute
            expect(loaded.size_vram).toBe(0); // --gpu off
            expect(new Date(loaded.expires_at).getTime()).toBeGreaterThan(Date.now() - 1_000);

            // an idle model is unloaded after its idle time; the server's own stays
            let names: string[] = [];
            for (let attempt = 0; attempt < 300; attempt++) {
                names = (await ollama.ps()).models.map((model) => model.name);
                if (names.length === 1) {
                    break;
                }
                await new Promise((resolve) => setTimeout(resolve, 200));
            }
            expect(names).toEqual(["tiny"]);
            // stderr is another pipe than the answer's socket: its line may come a moment after /api/ps no longer lists the model
            await expect.poll(() => server!.stderr(), { timeout: 10_000 }).toContain(`Unloaded "${LM_STUDIO_ID}"`);
            expect(server!.stderr()).toContain(`no request for ${IDLE_SECONDS} s`);

            // Hugging Face's snapshot loaded, then rewritten by another app under it: refused, saying what changed, and unloaded; the file is left as that app wrote it
            await chat(url, HF_ID, "gamma");
            fs.appendFileSync(layout.hf, Buffer.alloc(16));
            const refused = await chat(url, HF_ID, "gamma", 409);
            const body = (await refused.json()) as { error: { code: string; message: string } };
            expect(body.error.code).toBe("model_file_changed");
            expect(body.error.message).toContain(`its size went from 12,133,504 to 12,133,520 bytes`);
            expect(fs.statSync(layout.hf).size).toBe(12_133_520);
            // the unload is logged on stderr, another pipe than the 409's socket
            await expect.poll(() => server!.stderr(), { timeout: 10_000 }).toContain(`Unloaded "${HF_ID}" (`);
        },
        TEST_TIMEOUT_MS
    );

    it(
        "within a memory budget, unloads the least recently used idle model to load another, saying which, and refuses one that cannot fit with the plan's numbers",
        async () => {
            // the budget: the server's model and one tiny model fit, two do not (their plans, read from a first run)
            const measuring = layOut();
            const measureUrl = await start(measuring, []);
            await chat(measureUrl, LM_STUDIO_ID, "m");
            const planned = (await get(measureUrl, "/metrics")) as string;
            const bytesOf = (model: string): number =>
                Number(new RegExp(`kvault_loaded_model_planned_bytes\\{model="${model}",primary="\\w+"\\} (\\d+)`).exec(planned)![1]);
            const own = bytesOf("tiny");
            const one = bytesOf(LM_STUDIO_ID);
            await stopServe(server!);
            const budgetMb = Math.floor((own + one + one / 2) / (1024 * 1024));
            expect((budgetMb * 1024 * 1024 - own) / one).toBeGreaterThanOrEqual(1);
            expect((budgetMb * 1024 * 1024 - own) / one).toBeLessThan(2);

            const layout = layOut();
            const url = await start(layout, ["--models-memory-mb", String(budgetMb)]);
            await chat(url, LM_STUDIO_ID, "a");

            const second = await chat(url, OLLAMA_ID, "b");
            expect(second.headers.get("x-kvault-unloaded-models")).toBe(encodeURIComponent(LM_STUDIO_ID));
            expect(server!.stderr()).toContain(`Unloaded "${LM_STUDIO_ID}"`);
            expect(server!.stderr()).toContain(`to make room for "${OLLAMA_ID}"`);

            const large = await chat(url, LARGE_ID, "c", 503);
            const refusal = (await large.json()) as { error: { code: string; message: string } };
            expect(refusal.error.code).toBe("model_memory_budget");
            expect(refusal.error.message).toContain(`Loading "${LARGE_ID}" needs `);
            expect(refusal.error.message).toContain("Model weights (the file's size): 238.4 MB");
            expect(refusal.error.message).toContain(`the model memory budget is ${budgetMb}.0 MB`);
            expect(refusal.error.message).toContain(`"tiny" `);
            // nothing was unloaded for a load that could not fit
            const ps = (await get(url, "/api/ps")) as { models: { name: string }[] };
            expect(ps.models.map((model) => model.name)).toEqual(["tiny", OLLAMA_ID]);
            expect(generatedModelPath("small")).toBe(fs.realpathSync(path.join(layout.folder, "small-v1.gguf")));
        },
        TEST_TIMEOUT_MS
    );

    it(
        "runs a workspace's turns on the local model it chose, beside a workspace on the server's model, and names a chosen model that is not found",
        async () => {
            const layout = layOut();
            const url = await start(layout, []);
            const rpc = await RpcSocket.connect(url, API_KEY);
            try {
                const workspaces: WorkspaceMeta[] = [
                    { id: "on-own", name: "On the server's model", colour: 0, settings: defaultWorkspaceSettings },
                    {
                        id: "on-lm-studio",
                        name: "On LM Studio's file",
                        colour: 1,
                        settings: defaultWorkspaceSettings,
                        localModel: LM_STUDIO_ID
                    },
                    { id: "on-nothing", name: "On a lost file", colour: 2, settings: defaultWorkspaceSettings, localModel: "gone:latest" }
                ];
                for (const workspace of workspaces) {
                    await rpc.result("saveWorkspace", { workspace });
                    await rpc.result("appendMessage", { workspace: workspace.id, message: { id: "m-1", role: "user", content: "Hello" } });
                }
                const turn = (workspace: string): Promise<{ text: string; usage: { completionTokens: number } }> =>
                    rpc.result(
                        "chat",
                        {
                            requestId: `turn-${workspace}`,
                            workspace,
                            messages: [{ role: "user", content: "Hello" }],
                            sampling: { temperature: 0, maxTokens: 4 },
                            answerId: "m-2"
                        },
                        TEST_TIMEOUT_MS
                    );

                // A workspace's meter counts with its own model: its measure alone loads that model (before: the server's model measured it).
                const measure = (workspace: string) => ({ workspace, messages: [{ role: "user", content: "Hello" }], draft: "Hi" });
                const measured = await rpc.result<{ workspace: string; usedTokens: number }>(
                    "measure",
                    measure("on-lm-studio"),
                    TEST_TIMEOUT_MS
                );
                expect(measured).toMatchObject({ workspace: "on-lm-studio", usedTokens: expect.any(Number) });
                expect(server!.stderr()).toContain(`Loading "${LM_STUDIO_ID}" from ${layout.lmStudio}`);
                expect(await rpc.call("measure", measure("on-nothing"))).toMatchObject({
                    error: {
                        code: "model_not_found",
                        message: expect.stringContaining('The workspace "On a lost file" runs on the local model')
                    }
                });

                // before: "localModel" was not a field the store kept, and every workspace ran on the server's model
                const [own, chosen] = await Promise.all([turn("on-own"), turn("on-lm-studio")]);

                expect(own.usage.completionTokens).toBeGreaterThan(0);
                expect(chosen.usage.completionTokens).toBeGreaterThan(0);
                expect(server!.stderr()).toContain(`Loading "${LM_STUDIO_ID}" from ${layout.lmStudio}`);
                const ps = (await get(url, "/api/ps")) as { models: { name: string }[] };
                expect(ps.models.map((model) => model.name)).toEqual(["tiny", LM_STUDIO_ID]);
                const loaded = await rpc.result<{ workspaces: WorkspaceMeta[] }>("loadWorkspaces", {});
                expect(loaded.workspaces.find((workspace) => workspace.id === "on-lm-studio")?.localModel).toBe(LM_STUDIO_ID);
                const lost = await rpc.call("chat", {
                    requestId: "turn-on-nothing",
                    workspace: "on-nothing",
                    messages: [{ role: "user", content: "Hello" }],
                    sampling: { temperature: 0, maxTokens: 4 },
                    answerId: "m-2"
                });
                expect(lost).toMatchObject({
                    error: {
                        code: "model_not_found",
                        message: expect.stringContaining(
                            'The workspace "On a lost file" runs on the local model "gone:latest", which is not found on this disk now.'
                        )
                    }
                });
            } finally {
                rpc.close();
            }
        },
        TEST_TIMEOUT_MS
    );
});
