// A saved preset as a schema: savePreset's params, and what the preset store reads back from its
// file (host/presets/), are checked by this one definition, with a workspace's settings schema.
import * as v from "valibot";
import type { Preset } from "../presets.js";
import { presetLimits } from "../presets.js";
import { isStoreId, workspaceLimits } from "../workspaces.js";
import { readWith, type Read } from "./fieldSchemas.js";
import { describeStored, settingsSchema } from "./storeSchemas.js";

export const presetSchema = v.object({
    id: v.custom<string>(isStoreId, (issue) => `${describeStored(issue.input)} is not a store id (${workspaceLimits.idPattern.source})`),
    name: v.custom<string>(
        (value) => typeof value === "string" && value.trim() !== "" && value.length <= presetLimits.maxNameChars,
        (issue) => `${describeStored(issue.input)} is not a name of 1 to ${presetLimits.maxNameChars} characters`
    ),
    settings: settingsSchema
});

export function readPreset(value: unknown): Read<Preset> {
    return readWith(presetSchema, value);
}
