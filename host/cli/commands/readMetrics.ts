/** One sample of a Prometheus text exposition: its name, labels and value. */
export interface MetricSample {
    readonly name: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of Prometheus' text format 0.0.4 (comments skipped; a line that is not a sample is skipped, not believed). */
export function readMetrics(text: string): MetricSample[] {
    const samples: MetricSample[] = [];
    for (const line of text.split("\n")) {
        const match = SAMPLE.exec(line.trim());
        if (match === null || line.startsWith("#")) {
            continue;
        }
        const labels: Record<string, string> = {};
        for (const [, key, value] of (match[2] ?? "").matchAll(LABEL)) {
            labels[key!] = value!.replace(/\\(.)/g, (_all, character: string) => (character === "n" ? "\n" : character));
        }
        const value = Number(match[3]);
        if (Number.isFinite(value)) {
            samples.push({ name: match[1]!, labels, value });
        }
    }
    return samples;
}
