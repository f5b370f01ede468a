// `npm run bench -- gpu [--backend cuda|vulkan]`: Kvault on a GPU, in under ten minutes. On CUDA
// (an NVIDIA GPU; node-llama-cpp's local CUDA build when there is one, else its prebuilt CUDA
// binary): the `1b` preset in F16 and in Q4_K, the handoff's time as a share of prefill, a
// speculation arm (the F16 target drafted by its Q4_K file), and Kvault's `serve` beside llama-server
// built with -DGGML_CUDA=ON (skipped, saying why, without nvcc). On Vulkan the same arms but the
// peer's; on a software device alone (lavapipe) the tiny preset and short prompts: a smoke run that
// proves every arm runs end to end, whose times are not speed. Refuses, saying why, without a device.
import type { EngineCompute } from "../../../contract/engineCompute.js";
import { workspaceId } from "../../../engine/core/ids.js";
import { bytesPerToken } from "../../../engine/codec/KvLayout.js";
import type { EngineConfigInput } from "../../../engine/EngineConfig.js";
import { KvEngine } from "../../../engine/KvEngine.js";
import { ensureQuantizedModel, repositoryRoot } from "../../support/generatedModels.js";
import { benchEngineConfig, BENCH_THREADS, promptTokensOfLength } from "../benchPrompt.js";
import { BenchmarkRefusedError, formatNumber, median, printTable, type Benchmark, type BenchFigures } from "../benchUtils.js";
import { ensureLlamaServer } from "../peer/llamaServerBinary.js";
import { PeerPrompts } from "../peer/peerPrompts.js";
import { startKvault, startLlamaServer, type PeerConfig, type PeerServer } from "../peer/PeerServer.js";
import { runConcurrent, workloadShape, type ConcurrentFigures } from "../peer/peerWorkloads.js";
import {
    GpuBackendArgumentError,
    gpuBackendFromArguments,
    planGpuBench,
    type GpuBenchBackend,
    type GpuModelArm,
    type SpeculationArm
} from "./gpuPlan.js";
import { probeGpuMachine } from "./probeGpuMachine.js";

const PAGE_TOKENS = 256;
const NUM_REPETITIONS = 2;
const PEER_CONTEXT_TOKENS = 4096;

function modelPathOf(model: GpuModelArm): string {
    return ensureQuantizedModel(model.preset, model.quant);
}

interface HandoffRow {
    readonly model: string;
    /** The engine's binary (EngineCompute.binary) and the way its states went. */
    readonly binary: string;
    readonly stateExchange: string;
    readonly promptTokens: number;
    readonly kvBytes: number;
    readonly prefillMs: number;
    readonly handoffMs: number;
    readonly handoffShareOfPrefill: number;
    readonly handoffGBps: number;
}

/** Prefill and handoff of each prompt length, split mode on the GPU; medians of NUM_REPETITIONS. */
/** Starts an engine on `backend` and fails, naming what loaded, when node-llama-cpp computes on anything else. */
async function startEngineOn(backend: GpuBenchBackend, config: EngineConfigInput): Promise<KvEngine> {
    const engine = await KvEngine.start({ ...config, gpu: backend });
    if (engine.compute.backend !== backend) {
        await engine.dispose();
        throw new Error(`node-llama-cpp loaded ${engine.backend}, not ${backend}: the GPU benchmark measures nothing on it.`);
    }
    return engine;
}

function deviceNames(compute: EngineCompute): string {
    return compute.devices.map((device) => `${device.name} (${device.type} device)`).join(", ");
}

/**
 * The handoff arm with the binary the engine prefers ("auto": Kvault's patched build of the backend
 * when there is one) or node-llama-cpp's unpatched prebuilt, so that one run gives both.
 */
async function measureHandoff(
    backend: GpuBenchBackend,
    model: GpuModelArm,
    modelPath: string,
    llamaBinary: "auto" | "prebuilt"
): Promise<HandoffRow[]> {
    const contextSize = Math.ceil((Math.max(...model.handoffPromptTokens) + 64) / PAGE_TOKENS) * PAGE_TOKENS;
    const engine = await startEngineOn(backend, { ...benchEngineConfig(modelPath, contextSize, PAGE_TOKENS), llamaBinary });
    try {
        console.log(
            `handoff arm, ${model.preset} ${model.quant}: ${engine.backend}; devices ${deviceNames(engine.compute)}; ` +
                `states through ${engine.stateExchange.kind}`
        );
        const rows: HandoffRow[] = [];
        let next = 0;
        for (const length of model.handoffPromptTokens) {
            const prompt = promptTokensOfLength((text) => engine.tokenize(text), length);
            const samples: { prefillMs: number; handoffMs: number }[] = [];
            for (let repetition = 0; repetition <= NUM_REPETITIONS; repetition++) {
                const workspace = workspaceId(`bench-gpu-${next++}`);
                try {
                    const result = await engine.generate({ workspace, promptTokens: prompt, maxTokens: 1 });
                    if (repetition > 0) {
                        samples.push(result.timings); // the first is a warm-up
                    }
                } finally {
                    await engine.forgetWorkspace(workspace);
                }
            }
            const prefillMs = median(samples.map((sample) => sample.prefillMs));
            const handoffMs = median(samples.map((sample) => sample.handoffMs));
            const kvBytes = (length - 1) * bytesPerToken(engine.layout);
            rows.push({
                model: `${model.preset} ${model.quant}`,
                binary: engine.compute.binary,
                stateExchange: engine.stateExchange.kind,
                promptTokens: length,
                kvBytes,
                prefillMs,
                handoffMs,
                handoffShareOfPrefill: handoffMs / prefillMs,
                handoffGBps: kvBytes / (handoffMs * 1e6)
            });
        }
        return rows;
    } finally {
        await engine.dispose();
    }
}

interface SpeculationRow {
    readonly arm: "plain" | "draft model";
    readonly target: string;
    readonly draft: string;
    readonly generated: number;
    readonly decodeTokensPerSecond: number;
    readonly validated: number;
    readonly refuted: number;
}

/** The target decoding alone, then drafted by the draft model; median decode rate of NUM_REPETITIONS after a warm-up. */
async function measureSpeculation(backend: GpuBenchBackend, arm: SpeculationArm): Promise<SpeculationRow[]> {
    const targetPath = modelPathOf(arm.target);
    const draftPath = modelPathOf(arm.draft);
    const contextSize = Math.ceil((arm.promptTokens + arm.numGenerated + 64) / PAGE_TOKENS) * PAGE_TOKENS;
    const rows: SpeculationRow[] = [];
    const drafting: Partial<EngineConfigInput>[] = [
        {},
        // Random weights are never confident: every draft proposed, a handful ahead as llama-server drafts.
        { speculation: "draft-model", draftModelPath: draftPath, draftMaxTokens: 4, draftMinConfidence: 0 }
    ];
    for (const overrides of drafting) {
        const engine = await startEngineOn(backend, { ...benchEngineConfig(targetPath, contextSize, PAGE_TOKENS), ...overrides });
        try {
            const prompt = promptTokensOfLength((text) => engine.tokenize(text), arm.promptTokens);
            const samples: { rate: number; validated: number; refuted: number; generated: number }[] = [];
            for (let repetition = 0; repetition <= NUM_REPETITIONS; repetition++) {
                const workspace = workspaceId(`bench-gpu-speculation-${repetition}`);
                try {
                    const result = await engine.generate({ workspace, promptTokens: prompt, maxTokens: arm.numGenerated });
                    if (repetition > 0) {
                        samples.push({
                            rate: ((result.tokens.length - 1) * 1000) / result.timings.decodeMs,
                            validated: result.drafts.validated,
                            refuted: result.drafts.refuted,
                            generated: result.tokens.length
                        });
                    }
                } finally {
                    await engine.forgetWorkspace(workspace);
                }
            }
            rows.push({
                arm: overrides.speculation === undefined ? "plain" : "draft model",
                target: `${arm.target.preset} ${arm.target.quant}`,
                draft: overrides.speculation === undefined ? "none" : `${arm.draft.preset} ${arm.draft.quant}`,
                generated: median(samples.map((sample) => sample.generated)),
                decodeTokensPerSecond: median(samples.map((sample) => sample.rate)),
                validated: median(samples.map((sample) => sample.validated)),
                refuted: median(samples.map((sample) => sample.refuted))
            });
        } finally {
            await engine.dispose();
        }
    }
    return rows;
}

interface PeerRow {
    readonly model: string;
    readonly numWorkspaces: number;
    readonly kvault: ConcurrentFigures;
    readonly llama: ConcurrentFigures;
}

async function bestConcurrent(server: PeerServer, prompts: PeerPrompts, numWorkspaces: number): Promise<ConcurrentFigures> {
    let best: ConcurrentFigures | undefined;
    for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
        const figures = await runConcurrent(server, prompts, numWorkspaces);
        best = best === undefined || figures.tokensPerSecond > best.tokensPerSecond ? figures : best;
    }
    return best!;
}

async function measurePeer(binary: string, model: GpuModelArm, modelPath: string, workspaceCounts: readonly number[]): Promise<PeerRow[]> {
    const rows: PeerRow[] = [];
    for (const numWorkspaces of workspaceCounts) {
        const config: PeerConfig = {
            modelPath,
            contextSize: PEER_CONTEXT_TOKENS,
            numParallel: numWorkspaces,
            threads: BENCH_THREADS,
            gpuLayers: 999
        };
        const llama = await startLlamaServer(binary, config);
        let llamaFigures: ConcurrentFigures;
        let prompts: PeerPrompts;
        try {
            prompts = new PeerPrompts(llama);
            await prompts.text("warm", workloadShape.promptTokens);
            llamaFigures = await bestConcurrent(llama, prompts, numWorkspaces);
        } finally {
            await llama.stop();
        }
        const kvault = await startKvault(config);
        try {
            rows.push({
                model: `${model.preset} ${model.quant}`,
                numWorkspaces,
                kvault: await bestConcurrent(kvault, prompts, numWorkspaces),
                llama: llamaFigures
            });
        } finally {
            await kvault.stop();
        }
    }
    return rows;
}

function backendArgument(): GpuBenchBackend | undefined {
    try {
        // `npm run bench -- gpu --backend vulkan`: the runner's filter is argv[2], the bench's own options follow it.
        return gpuBackendFromArguments(process.argv.slice(3));
    } catch (error) {
        throw error instanceof GpuBackendArgumentError ? new BenchmarkRefusedError(error.message) : error;
    }
}

export const gpuBench: Benchmark = {
    name: "gpu",
    description:
        "Kvault on a GPU (CUDA, or Vulkan: `-- gpu --backend vulkan|cuda`): 1b preset F16 and Q4_K, handoff as a share of prefill, " +
        "speculation with a draft model, serve beside llama-server built for the backend (a smoke run on a software device)",
    explicitOnly: true,
    async run(): Promise<BenchFigures> {
        const requested = backendArgument();
        const machine = probeGpuMachine(repositoryRoot, requested);
        const plan = planGpuBench(machine, requested);
        if (!plan.ok) {
            throw new BenchmarkRefusedError(plan.reason);
        }
        // Before node-llama-cpp loads in this process or any it starts: ggml reads them once.
        Object.assign(process.env, plan.environment);
        const setting = Object.entries(plan.environment)
            .map(([name, value]) => `${name}=${value}`)
            .join(" ");
        const label = `${plan.backend}, ${plan.gpuName}${plan.smoke ? " (software device: smoke run, not speed)" : ""}`;
        console.log(
            `Backend: ${plan.backend}; device: ${plan.gpuName}; engine binary: ${plan.binary}; ` +
                `models: ${plan.models.map((model) => `${model.preset} ${model.quant}`).join(", ")}; ` +
                `speculation: ${plan.speculation.target.preset} ${plan.speculation.target.quant} drafted by ${plan.speculation.draft.preset} ${plan.speculation.draft.quant}; ` +
                `peer: ${plan.peer.kind === "skip" ? `skipped (${plan.peer.reason})` : `llama-server for CUDA${plan.peer.buildFirst ? ", built first" : ""}, on ${plan.peerModels.map((model) => model.quant).join(", ")}`}; ` +
                `budget ${plan.estimatedSeconds} s${setting === "" ? "" : `; set for this run: ${setting}`}`
        );
        if (plan.smoke) {
            console.log(
                "SMOKE RUN: the only Vulkan device is a software one, so the tiny preset and short prompts prove that every arm runs end " +
                    "to end; no time below is a speed figure."
            );
        }
        const handoffRows: HandoffRow[] = [];
        const peerRows: PeerRow[] = [];
        const binary = plan.peer.kind === "run" ? ensureLlamaServer(console.log, { cuda: true }) : undefined;
        for (const model of plan.models) {
            const modelPath = modelPathOf(model);
            const preferred = await measureHandoff(plan.backend, model, modelPath, "auto");
            handoffRows.push(...preferred);
            if (preferred.some((row) => row.binary !== "prebuilt")) {
                handoffRows.push(...(await measureHandoff(plan.backend, model, modelPath, "prebuilt")));
            }
            if (binary !== undefined && plan.peer.kind === "run" && plan.peerModels.includes(model)) {
                peerRows.push(...(await measurePeer(binary, model, modelPath, plan.peer.workspaceCounts)));
            }
        }
        const speculationRows = await measureSpeculation(plan.backend, plan.speculation);
        printTable(
            `Handoff against prefill on ${label} (median of ${NUM_REPETITIONS}, split mode)`,
            [
                { header: "model", cell: (row: HandoffRow) => row.model, align: "left" },
                { header: "binary", cell: (row) => `${row.binary}, states through ${row.stateExchange}`, align: "left" },
                { header: "prompt", cell: (row) => `${row.promptTokens} tok` },
                { header: "prefill", cell: (row) => `${formatNumber(row.prefillMs, 0)} ms` },
                { header: "handoff", cell: (row) => `${formatNumber(row.handoffMs, 1)} ms` },
                { header: "handoff ÷ prefill", cell: (row) => `${formatNumber(100 * row.handoffShareOfPrefill, 1)} %` },
                { header: "handoff rate", cell: (row) => `${formatNumber(row.handoffGBps, 2)} GB/s` }
            ],
            handoffRows
        );
        const prebuiltRows = handoffRows.filter((row) => row.binary === "prebuilt");
        const ratios = handoffRows
            .filter((row) => row.binary !== "prebuilt")
            .flatMap((row) => {
                const prebuilt = prebuiltRows.find((other) => other.model === row.model && other.promptTokens === row.promptTokens);
                return prebuilt === undefined ? [] : [{ patched: row, prebuilt }];
            });
        if (ratios.length > 0) {
            printTable(
                `Handoff, Kvault's patched build against node-llama-cpp's prebuilt, in this run on ${label}`,
                [
                    { header: "model", cell: (row: (typeof ratios)[number]) => row.patched.model, align: "left" },
                    { header: "prompt", cell: (row) => `${row.patched.promptTokens} tok` },
                    {
                        header: "prebuilt ÷ patched handoff",
                        cell: (row) => `${formatNumber(row.prebuilt.handoffMs / row.patched.handoffMs, 2)}×`
                    },
                    {
                        header: "prebuilt ÷ patched prefill",
                        cell: (row) => `${formatNumber(row.prebuilt.prefillMs / row.patched.prefillMs, 2)}×`
                    }
                ],
                ratios
            );
        }
        printTable(
            `Speculation on ${label}, ${plan.speculation.promptTokens}-token prompt, up to ${plan.speculation.numGenerated} new tokens (median of ${NUM_REPETITIONS})`,
            [
                { header: "arm", cell: (row: SpeculationRow) => row.arm, align: "left" },
                { header: "target", cell: (row) => row.target, align: "left" },
                { header: "draft", cell: (row) => row.draft, align: "left" },
                { header: "generated", cell: (row) => `${row.generated} tok` },
                { header: "decode", cell: (row) => `${formatNumber(row.decodeTokensPerSecond, 1)} tok/s` },
                { header: "drafts confirmed", cell: (row) => `${row.validated} of ${row.validated + row.refuted}` }
            ],
            speculationRows
        );
        if (plan.peer.kind === "skip") {
            console.log(`\nllama-server arm on ${label} skipped: ${plan.peer.reason}.`);
        } else {
            printTable(
                `Kvault serve vs llama-server on ${label}, ${workloadShape.promptTokens}-token prompts, ${workloadShape.answerTokens} new tokens (best of ${NUM_REPETITIONS})`,
                [
                    { header: "model", cell: (row: PeerRow) => row.model, align: "left" },
                    { header: "workspaces", cell: (row) => `${row.numWorkspaces}` },
                    { header: "Kvault tok/s", cell: (row) => formatNumber(row.kvault.tokensPerSecond, 1) },
                    { header: "llama-server tok/s", cell: (row) => formatNumber(row.llama.tokensPerSecond, 1) },
                    { header: "ratio", cell: (row) => `${formatNumber(row.kvault.tokensPerSecond / row.llama.tokensPerSecond, 2)}×` },
                    { header: "TTFT p50 ratio", cell: (row) => `${formatNumber(row.kvault.ttftP50Ms / row.llama.ttftP50Ms, 2)}×` }
                ],
                peerRows
            );
        }
        return {
            backend: plan.backend,
            gpu: plan.gpuName,
            smoke: plan.smoke,
            binary: plan.binary,
            peer: plan.peer,
            handoff: handoffRows,
            speculation: speculationRows,
            peerRows
        };
    }
};
