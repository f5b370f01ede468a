// An MCP tool's arguments' schema made one a grammar can enforce in full (readGrammarSchema): the
// keywords it cannot enforce (minimum, pattern, most formats…) are dropped, and a `type` beside an
// `enum` gives way to the enum, one refusal at a time. What is dropped is the server's to check:
// an MCP server validates its own arguments, and a call it refuses ends with mcp_tool_failed.
import type { JsonObject } from "../../contract/engineProtocol.js";
import { readGrammarSchema } from "../../contract/rpc/readGrammarSchema.js";

/** Keywords dropped at most: a bound on the loop, far above a tool's schema. */
const MAX_RELAX_STEPS = 64;

export type RelaxedSchema =
    | { readonly ok: true; readonly schema: JsonObject; readonly dropped: readonly string[] }
    | { readonly ok: false; readonly reason: string };

export function relaxToolSchema(schema: JsonObject): RelaxedSchema {
    const copy = structuredClone(schema) as Record<string, unknown>;
    const dropped: string[] = [];
    for (let step = 0; step < MAX_RELAX_STEPS; step++) {
        const read = readGrammarSchema(copy);
        if (read.ok) {
            // The schema as the server wrote it, less what was dropped: the chat template shows it whole (`required` too).
            return { ok: true, schema: copy, dropped };
        }
        const segments = [...read.path.matchAll(/\.([^.[\]]+)|\[(\d+)\]/g)].map((match) => match[1] ?? Number(match[2]));
        const node = walk(copy, segments);
        if (isObject(node) && "enum" in node && "type" in node) {
            delete node.type;
            dropped.push(`${read.path}.type`);
            continue;
        }
        const parent = walk(copy, segments.slice(0, -1));
        const key = segments.at(-1);
        if (!isObject(parent) || typeof key !== "string" || !(key in parent)) {
            return { ok: false, reason: `${read.path || "the schema"} ${read.reason}` };
        }
        delete parent[key];
        dropped.push(read.path);
    }
    return { ok: false, reason: `more than ${MAX_RELAX_STEPS} of its parts cannot be enforced by a grammar` };
}

function walk(root: unknown, segments: readonly (string | number)[]): unknown {
    let node = root;
    for (const segment of segments) {
        if (typeof segment === "number" ? !Array.isArray(node) : !isObject(node)) {
            return undefined;
        }
        node = (node as Record<string | number, unknown>)[segment];
    }
    return node;
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
