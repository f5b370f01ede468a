import type { EngineCompute } from "../../contract/engineCompute.js";
import type { EngineSnapshot } from "../../contract/EngineSnapshot.js";

/** The engine's counters in Prometheus text format 0.0.4. */
export function prometheusMetrics(
    snapshot: EngineSnapshot,
    http: {
        readonly requests: Readonly<Record<string, number>>;
        /** Embed calls the API served (`embedded`) and that failed (`embed_failed`): requests too, though not turns. */
        readonly embeds?: Readonly<Record<"embedded" | "embed_failed", number>>;
        /** What the engine computes on (EngineInfo.compute); absent before its first start. */
        readonly compute?: EngineCompute;
    }
): string {
    const lines: string[] = [];
    const metric = (name: string, type: "gauge" | "counter", help: string, samples: readonly [labels: string, value: number][]): void => {
        lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
        for (const [labels, value] of samples) {
            lines.push(`${name}${labels} ${Number.isFinite(value) ? value : 0}`);
        }
    };
    const { pageMap, counters } = snapshot;
    metric(
        "kvault_pages",
        "gauge",
        "KV pages in the host pool, by state.",
        Object.entries(pageMap.numPagesByState).map(([state, count]) => [`{state="${state}"}`, count])
    );
    metric("kvault_page_leases_active", "gauge", "Page leases held by in-flight transfers.", [["", pageMap.numActiveLeases]]);
    metric(
        "kvault_requests_total",
        "counter",
        "Engine requests by outcome; embeddings as embedded and embed_failed.",
        [...Object.entries(counters.requests), ...Object.entries(http.embeds ?? {})].map(([outcome, count]) => [
            `{outcome="${outcome}"}`,
            count
        ])
    );
    metric("kvault_integrity_failures_total", "counter", "Handoffs and swaps refused by a page integrity check.", [
        ["", counters.integrityFailures]
    ]);
    metric("kvault_stale_writes_refused_total", "counter", "Page writes refused for a stale generation or a released page.", [
        ["", counters.staleWritesRefused]
    ]);
    metric(
        "kvault_stale_completions_ignored_total",
        "counter",
        "Late or duplicate transfer completions ignored by their request and generation.",
        [["", counters.staleCompletionsIgnored]]
    );
    metric("kvault_pages_scrubbed_total", "counter", "Pages zeroed before returning to the free list.", [["", counters.pagesScrubbed]]);
    metric("kvault_swaps_total", "counter", "Workspaces moved between decode sequences and pages.", [
        [`{direction="out"}`, counters.swapOuts],
        [`{direction="in"}`, counters.swapIns],
        [`{direction="dropped"}`, counters.swapDrops]
    ]);
    metric("kvault_tokens_total", "counter", "Tokens, by kind.", [
        [`{kind="generated"}`, counters.generatedTokens],
        [`{kind="prompt_evaluated"}`, counters.evaluatedPromptTokens],
        [`{kind="prompt_reused"}`, counters.reusedPromptTokens]
    ]);
    metric("kvault_draft_tokens_total", "counter", "Tokens speculative decoding drafted, by whether the model confirmed them.", [
        [`{outcome="accepted"}`, counters.acceptedDraftTokens],
        [`{outcome="rejected"}`, counters.rejectedDraftTokens]
    ]);
    metric("kvault_tokens_per_second", "gauge", "Generated tokens per second, all workspaces, over the last seconds.", [
        ["", snapshot.tokensPerSecond]
    ]);
    metric("kvault_queue_length", "gauge", "Requests waiting for a decode sequence.", [["", snapshot.numQueued]]);
    metric(
        "kvault_context_limit_tokens",
        "gauge",
        "The advertised context limit and the measured capacities, in tokens.",
        Object.entries(snapshot.capacities).map(([bound, tokens]) => [`{bound="${bound}"}`, tokens])
    );
    metric(
        "kvault_http_requests_total",
        "counter",
        "HTTP API responses by status.",
        Object.entries(http.requests).map(([status, count]) => [`{status="${status}"}`, count])
    );
    const { compute } = http;
    if (compute !== undefined) {
        const devices = compute.devices.map((device) => device.name).join(", ");
        const types = compute.devices.map((device) => device.type).join(", ");
        metric("kvault_compute_info", "gauge", "What the engine computes on: backend, binary, devices and their types (1).", [
            [`{backend="${compute.backend}",binary="${compute.binary}",devices="${labelValue(devices)}",device_types="${types}"}`, 1]
        ]);
        metric(
            "kvault_model_layers",
            "gauge",
            "The model's layers, by where node-llama-cpp placed them and how many were planned on the device.",
            [
                [`{where="device"}`, compute.layers.numOnDevice],
                [`{where="cpu"}`, compute.layers.numTotal - compute.layers.numOnDevice],
                [`{where="planned_on_device"}`, compute.layers.numPlanned]
            ]
        );
        if (compute.deviceMemory !== undefined) {
            metric("kvault_device_memory_bytes", "gauge", "The GPU devices' memory when the engine came up, bytes.", [
                [`{state="used"}`, compute.deviceMemory.usedBytes],
                [`{state="total"}`, compute.deviceMemory.totalBytes]
            ]);
        }
    }
    return lines.join("\n") + "\n";
}

/** A label value in Prometheus' text format: backslash, quote and newline escaped. */
function labelValue(text: string): string {
    return text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
