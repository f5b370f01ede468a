import { describe, expect, it } from "vitest";
import { relaxToolSchema } from "../../../../host/mcp/relaxToolSchema.js";

describe("relaxToolSchema", () => {
    it("keeps a schema a grammar enforces as it is", () => {
        const schema = { type: "object", properties: { key: { enum: ["atlas", "bravo"] } }, required: ["key"] };
        expect(relaxToolSchema(schema)).toMatchObject({ ok: true, schema: { properties: schema.properties }, dropped: [] });
    });

    it("drops what a grammar cannot enforce (a type beside an enum, minimum, a uri format), as zod's schemas have them, and names each", () => {
        const relaxed = relaxToolSchema({
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: {
                mode: { type: "string", enum: ["read", "write"] },
                count: { type: "integer", minimum: 1 },
                links: { type: "array", items: { type: "string", format: "uri" } }
            },
            required: ["mode"],
            additionalProperties: false
        });
        expect(relaxed.ok).toBe(true);
        expect(relaxed.ok && relaxed.dropped).toEqual([
            ".properties.mode.type",
            ".properties.count.minimum",
            ".properties.links.items.format"
        ]);
        expect(relaxed.ok && relaxed.schema.properties).toMatchObject({
            mode: { enum: ["read", "write"] },
            count: { type: "integer" },
            links: { type: "array", items: { type: "string" } }
        });
    });
});
