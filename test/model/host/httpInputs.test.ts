import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpDefaults } from "../../../host/http/KvaultHttpServer.js";
import { expectEngineClean, tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const API_KEY = "inputs-test-key-01";

// Bad input from a local client: framing by another site, broken %-escapes and bytes that are
// not UTF-8 each get a clear 4xx, and the server keeps serving.
describe("the HTTP server refuses malformed input with a 4xx and cannot be framed", () => {
    let api: InProcessApiServer;
    let url: string;
    const rendererDirectory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-renderer-"));
    const authorized = { Authorization: `Bearer ${API_KEY}` };

    beforeAll(async () => {
        fs.writeFileSync(
            path.join(rendererDirectory, "index.html"),
            "<!doctype html><html><head><title>Kvault</title></head><body></body></html>"
        );
        fs.writeFileSync(path.join(rendererDirectory, "app.js"), "console.log('kvault');");
        api = await startInProcessApiServer({
            apiKey: API_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: { rendererDirectory, requestTimeoutMs: httpDefaults.requestTimeoutMs }
        });
        url = api.url;
    });
    afterAll(async () => {
        await api?.close();
        fs.rmSync(rendererDirectory, { recursive: true, force: true });
    });

    it("tells browsers never to show the UI, or any answer, inside another site's frame", async () => {
        for (const response of [
            await fetch(`${url}/`),
            await fetch(`${url}/app.js`),
            await fetch(`${url}/health`),
            await fetch(`${url}/v1/models`, { headers: authorized }),
            await fetch(`${url}/nothing-here`)
        ]) {
            expect(response.headers.get("x-frame-options"), response.url).toBe("DENY");
            expect(response.headers.get("content-security-policy"), response.url).toBe("frame-ancestors 'none'");
            await response.body?.cancel();
        }
    });

    it.each([
        ["/v1/models/%E0%A4%A", "a % at character 18 that is not followed by two hex digits"],
        ["/v1/models/%E0%A4", "%-escapes that are not UTF-8"],
        ["/v1/models/tiny%zz", "a % at character 16 that is not followed by two hex digits"],
        ["/assets/%C3%28.js", "%-escapes that are not UTF-8"],
        ["/%", "a % at character 2"]
    ])("answers %s with a 400 that names the broken escape, never a 500", async (pathname, why) => {
        const response = await fetch(url + pathname, { headers: authorized });
        expect(response.status).toBe(400);
        const body = (await response.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe("invalid_url");
        expect(body.error.message).toContain(why);
        expect((await fetch(`${url}/v1/models/tiny`, { headers: authorized })).status).toBe(200);
    });

    it("refuses a JSON body that is not UTF-8 with a 400 instead of reading it with replacement characters", async () => {
        const prefix = Buffer.from('{"model":"tiny","max_tokens":1,"messages":[{"role":"user","content":"caf');
        const suffix = Buffer.from('"}]}');
        for (const bad of [Buffer.from([0xe9]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff, 0xfe])]) {
            const body = Buffer.concat([prefix, bad, suffix]);
            const response = await fetch(`${url}/v1/chat/completions`, {
                method: "POST",
                headers: { ...authorized, "Content-Type": "application/json" },
                body
            });
            expect(response.status, bad.toString("hex")).toBe(400);
            expect(await response.json()).toMatchObject({
                error: {
                    code: "invalid_encoding",
                    message: `The request body (${body.length} bytes) is not valid UTF-8; send JSON encoded as UTF-8.`
                }
            });
        }
        // The same request in UTF-8 is answered.
        const good = await fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: { ...authorized, "Content-Type": "application/json" },
            body: Buffer.concat([prefix, Buffer.from("é"), suffix])
        });
        expect(good.status).toBe(200);
        await good.body?.cancel();
        await expectEngineClean(api.service.engine);
    });
});
