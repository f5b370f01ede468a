import type { WorkspaceSettings } from "./Workspace.js";

/** The sampler's knobs a preset sets; the system prompt, max tokens, seed and stop strings stay the workspace's. */
export type SamplingKnobs = Pick<WorkspaceSettings, "temperature" | "topP" | "topK" | "minP" | "repeatPenalty">;

/**
 * Starting points, as LM Studio and Open WebUI offer them: Precise for facts and code (near
 * greedy), Balanced for chat, Creative for stories. Values are the common llama.cpp ones.
 */
export const samplingPresets: readonly { readonly name: string; readonly description: string; readonly knobs: SamplingKnobs }[] = [
    {
        name: "Precise",
        description: "Facts and code: nearly always the likeliest token.",
        knobs: { temperature: 0.2, topP: 0.9, topK: 20, minP: 0.1, repeatPenalty: 1.1 }
    },
    {
        name: "Balanced",
        description: "Everyday chat.",
        knobs: { temperature: 0.7, topP: 0.95, topK: 40, minP: 0.05, repeatPenalty: 1.1 }
    },
    {
        name: "Creative",
        description: "Stories and ideas: more varied, less predictable.",
        knobs: { temperature: 1.1, topP: 0.98, topK: 100, minP: 0.02, repeatPenalty: 1.05 }
    }
];

/** The preset the settings are on, if any (every knob equal). */
export function presetOf(settings: WorkspaceSettings): string | undefined {
    return samplingPresets.find(({ knobs }) => (Object.keys(knobs) as (keyof SamplingKnobs)[]).every((key) => settings[key] === knobs[key]))
        ?.name;
}

/** Stop strings as typed, one a line: empty lines are none; at most `maxStrings` of at most `maxChars`, else why not. */
export function parseStopStrings(
    text: string,
    maxStrings: number,
    maxChars: number
): { readonly ok: true; readonly stop: string[] } | { readonly ok: false; readonly reason: string } {
    const stop = text.split("\n").filter((line) => line !== "");
    if (stop.length > maxStrings) {
        return { ok: false, reason: `${stop.length} stop strings; at most ${maxStrings} are used` };
    }
    const long = stop.find((line) => line.length > maxChars);
    if (long !== undefined) {
        return { ok: false, reason: `a stop string has ${long.length} characters; at most ${maxChars}` };
    }
    return { ok: true, stop };
}
