import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineInfo } from "../../../../contract/engineProtocol.js";
import type { EngineClient } from "../../../../contract/engineProtocol.js";
import { LocalApiController } from "../../../../main/localApi/LocalApiController.js";
import type { LocalApiSettings } from "../../../../main/settings/AppSettings.js";
import { SettingsService } from "../../../../main/settings/SettingsService.js";
import { SettingsFile } from "../../../../host/settings/SettingsFile.js";
import { freePort, occupy } from "../loopbackPorts.js";

const apiKey = "kv-test-key-0001";
const engine = { info: { modelName: "tiny" } as EngineInfo } as EngineClient;
const log = (): void => undefined;

async function models(url: string): Promise<Response> {
    return fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
}

const controllers: LocalApiController[] = [];
function controller(): LocalApiController {
    const created = new LocalApiController(async () => ({ engine, modelId: () => "tiny" }), log);
    controllers.push(created);
    return created;
}

describe("SettingsService", () => {
    let directory: string;
    let store: SettingsFile;

    beforeEach(async () => {
        directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-service-"));
        store = await SettingsFile.open(path.join(directory, "settings.json"), { log, makeApiKey: () => apiKey });
    });

    afterEach(async () => {
        await Promise.all(controllers.splice(0).map((created) => created.close()));
        fs.rmSync(directory, { recursive: true, force: true });
    });

    function savedLocalApi(): LocalApiSettings {
        return (JSON.parse(fs.readFileSync(path.join(directory, "settings.json"), "utf8")) as { localApi: LocalApiSettings }).localApi;
    }

    it("switches the API on and off, saving each change once it holds", async () => {
        const port = await freePort();
        const service = new SettingsService(store, controller(), log);
        expect(service.localApiView()).toEqual({ enabled: false, port: 8080, apiKey, url: null, problem: null, editable: true });
        expect(service.modelPath).toBeNull();

        const on = await service.setLocalApi({ enabled: true, port });
        expect(on).toEqual({ enabled: true, port, apiKey, url: `http://127.0.0.1:${port}`, problem: null, editable: true });
        expect(savedLocalApi()).toEqual({ enabled: true, port, apiKey });
        expect((await models(on.url!)).status).toBe(200);

        const off = await service.setLocalApi({ enabled: false, port });
        expect(off).toMatchObject({ enabled: false, url: null });
        expect(savedLocalApi()).toEqual({ enabled: false, port, apiKey });
    });

    it("changes nothing, and keeps the running API, when the new port is taken", async () => {
        const [port, taken] = [await freePort(), await freePort()];
        const service = new SettingsService(store, controller(), log);
        await service.setLocalApi({ enabled: true, port });
        const other = await occupy(taken);
        try {
            await expect(service.setLocalApi({ enabled: true, port: taken })).rejects.toMatchObject({ code: "local_api_start_failed" });
        } finally {
            await new Promise((resolve) => other.close(resolve));
        }
        expect(service.localApiView()).toEqual({
            enabled: true,
            port,
            apiKey,
            url: `http://127.0.0.1:${port}`,
            problem: null,
            editable: true
        });
        expect(savedLocalApi().port).toBe(port);
        expect((await models(`http://127.0.0.1:${port}`)).status).toBe(200);
    });

    it("refuses a bad change before touching anything", async () => {
        const service = new SettingsService(store, controller(), log);
        expect(() => service.setLocalApi({ enabled: "yes", port: 8080 })).toThrow(/enabled must be true or false/);
        expect(savedLocalApi()).toEqual({ enabled: false, port: 8080, apiKey });
    });

    it("at launch starts what the settings say; a failure shows in the view instead of stopping the app", async () => {
        const port = await freePort();
        await store.save({ ...store.current, localApi: { enabled: true, port, apiKey } });
        const other = await occupy(port);
        try {
            const service = new SettingsService(store, controller(), log);
            await service.startLocalApi();
            expect(service.localApiView()).toMatchObject({ enabled: true, url: null, problem: { code: "local_api_start_failed" } });
        } finally {
            await new Promise((resolve) => other.close(resolve));
        }
    });

    it("remembers the model loaded last and the theme, in the file, for the next start", async () => {
        const service = new SettingsService(store, controller(), log);
        const model = path.join(directory, "chosen.gguf");
        await service.rememberModel(model);
        await service.setTheme("dark");
        expect(service.modelPath).toBe(model);
        expect(service.theme).toBe("dark");

        const reopened = await SettingsFile.open(path.join(directory, "settings.json"), { log, makeApiKey: () => "kv-other-key-0002" });
        expect(reopened.current).toMatchObject({ modelPath: model, theme: "dark", localApi: { apiKey } });

        await service.rememberModel(null); // back to the demo model
        expect((await SettingsFile.open(path.join(directory, "settings.json"), { log })).current.modelPath).toBeNull();
    });
});
