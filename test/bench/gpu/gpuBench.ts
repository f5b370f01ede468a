// `npm run bench -- gpu`: Kvault on an NVIDIA GPU, in under ten minutes: the `1b` preset in F16 and
// in Q4_K on CUDA (node-llama-cpp's local CUDA build when there is one, else its prebuilt CUDA
// binary), the handoff's time as a share of prefill, and Kvault's `serve` beside llama-server built
// with -DGGML_CUDA=ON (skipped, saying why, without nvcc). Refuses, saying why, without a GPU.
import { workspaceId } from "../../../engine/core/ids.js";
import { bytesPerToken } from "../../../engine/codec/KvLayout.js";
import { KvEngine } from "../../../engine/KvEngine.js";
import { ensureQuantizedModel, repositoryRoot } from "../../support/generatedModels.js";
import { benchEngineConfig, BENCH_THREADS, promptTokensOfLength } from "../benchPrompt.js";
import { BenchmarkRefusedError, formatNumber, median, printTable, type Benchmark, type BenchFigures } from "../benchUtils.js";
import { ensureLlamaServer } from "../peer/llamaServerBinary.js";
import { PeerPrompts } from "../peer/peerPrompts.js";
import { startKvault, startLlamaServer, type PeerConfig, type PeerServer } from "../peer/PeerServer.js";
import { runConcurrent, workloadShape, type ConcurrentFigures } from "../peer/peerWorkloads.js";
import { planGpuBench, type GpuModelArm } from "./gpuPlan.js";
import { probeGpuMachine } from "./probeGpuMachine.js";

const PAGE_TOKENS = 256;
const NUM_REPETITIONS = 2;
const PEER_CONTEXT_TOKENS = 4096;

function modelPathOf(model: GpuModelArm): string {
    return ensureQuantizedModel(model.preset, model.quant);
}

interface HandoffRow {
    readonly model: string;
    readonly promptTokens: number;
    readonly kvBytes: number;
    readonly prefillMs: number;
    readonly handoffMs: number;
    readonly handoffShareOfPrefill: number;
    readonly handoffGBps: number;
}

/** Prefill and handoff of each prompt length, split mode on the GPU; medians of NUM_REPETITIONS. */
async function measureHandoff(model: GpuModelArm, modelPath: string): Promise<HandoffRow[]> {
    const contextSize = Math.ceil((Math.max(...model.handoffPromptTokens) + 64) / PAGE_TOKENS) * PAGE_TOKENS;
    const engine = await KvEngine.start(benchEngineConfig(modelPath, contextSize, PAGE_TOKENS, { gpu: "auto" }));
    try {
        if (!engine.backend.startsWith("cuda")) {
            throw new Error(`node-llama-cpp loaded ${engine.backend}, not CUDA: the GPU benchmark measures nothing on it.`);
        }
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

export const gpuBench: Benchmark = {
    name: "gpu",
    description:
        "Kvault on an NVIDIA GPU (CUDA): 1b preset F16 and Q4_K, handoff as a share of prefill, serve beside llama-server built for CUDA",
    explicitOnly: true,
    async run(): Promise<BenchFigures> {
        const machine = probeGpuMachine(repositoryRoot);
        const plan = planGpuBench(machine);
        if (!plan.ok) {
            throw new BenchmarkRefusedError(plan.reason);
        }
        console.log(
            `GPU: ${plan.gpuName}; engine binary: ${plan.binary}; models: ${plan.models.map((model) => `${model.preset} ${model.quant}`).join(", ")}; ` +
                `peer: ${plan.peer.kind === "skip" ? `skipped (${plan.peer.reason})` : `llama-server for CUDA${plan.peer.buildFirst ? ", built first" : ""}, on ${plan.peerModels.map((model) => model.quant).join(", ")}`}; ` +
                `budget ${plan.estimatedSeconds} s`
        );
        const handoffRows: HandoffRow[] = [];
        const peerRows: PeerRow[] = [];
        const binary = plan.peer.kind === "run" ? ensureLlamaServer(console.log, { cuda: true }) : undefined;
        for (const model of plan.models) {
            const modelPath = modelPathOf(model);
            handoffRows.push(...(await measureHandoff(model, modelPath)));
            if (binary !== undefined && plan.peer.kind === "run" && plan.peerModels.includes(model)) {
                peerRows.push(...(await measurePeer(binary, model, modelPath, plan.peer.workspaceCounts)));
            }
        }
        printTable(
            `Handoff against prefill on ${plan.gpuName} (median of ${NUM_REPETITIONS}, split mode)`,
            [
                { header: "model", cell: (row: HandoffRow) => row.model, align: "left" },
                { header: "prompt", cell: (row) => `${row.promptTokens} tok` },
                { header: "prefill", cell: (row) => `${formatNumber(row.prefillMs, 0)} ms` },
                { header: "handoff", cell: (row) => `${formatNumber(row.handoffMs, 1)} ms` },
                { header: "handoff ÷ prefill", cell: (row) => `${formatNumber(100 * row.handoffShareOfPrefill, 1)} %` },
                { header: "handoff rate", cell: (row) => `${formatNumber(row.handoffGBps, 2)} GB/s` }
            ],
            handoffRows
        );
        if (plan.peer.kind === "skip") {
            console.log(`\nllama-server arm skipped: ${plan.peer.reason}.`);
        } else {
            printTable(
                `Kvault serve vs llama-server (CUDA), ${workloadShape.promptTokens}-token prompts, ${workloadShape.answerTokens} new tokens (best of ${NUM_REPETITIONS})`,
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
        return { gpu: plan.gpuName, binary: plan.binary, peer: plan.peer, handoff: handoffRows, peerRows };
    }
};
