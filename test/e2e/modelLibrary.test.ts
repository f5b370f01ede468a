import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureChunkedModel, IPULL_CHUNK_BYTES, sha256, startModelFileServer, type ModelFileServer } from "../support/modelFileServer.js";
import { openModelPanel } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

/** Where the file server cuts every answer: one whole 5 MiB chunk and 2 MiB of the next arrive. */
const CUT = IPULL_CHUNK_BYTES + 2 * 1024 * 1024;

describe("the model library in a real browser: a dropped download is resumed from its bytes, and the library keeps the model (loopback only)", () => {
    // A download without a new byte for 2 s is given up and kept to resume (60 s by default).
    const { app, server, screenshots } = useKvaultApp({
        viewport: { width: 1280, height: 1500 },
        serveArgs: ["--download-stall-seconds", "2"],
        prepare: ({ page }) => openModelPanel(page)
    });
    let files: ModelFileServer | undefined;
    let model: Buffer;

    beforeAll(async () => {
        model = fs.readFileSync(ensureChunkedModel());
        files = await startModelFileServer();
        files.serve("library.gguf", { body: model, ranges: true });
    });
    afterAll(async () => {
        await files?.close();
    });

    it("a download cut halfway fails with its bytes and a Resume button; Resume asks only for the rest, and the model joins the library", async () => {
        const { page } = app();
        const manager = page.locator(".model-manager");
        files!.cutAt("library.gguf", CUT);
        await page.getByLabel("Download a model (URL or hf: reference)").fill(`${files!.url}/library.gguf`);
        await page.getByRole("button", { name: "Download the model" }).click();
        const row = manager.locator(".model-download").first();
        await expect.poll(() => row.getAttribute("data-download-state"), { timeout: 30_000, interval: 100 }).toBe("failed");
        const status = (await row.locator(".model-download-status").textContent())!;
        expect(status).toMatch(
            /^Stopped at 7\.00 MiB of 11\.\d MiB, 5\.00 MiB kept \(download_interrupted\): The download of library\.gguf stopped: no data arrived for 2 s after 7,340,032 of [\d,]+ bytes/
        );
        expect(status).toMatch(/5,242,880 bytes are kept; Resume continues from there\.$/);
        const resume = page.getByRole("button", { name: "Resume the download of library.gguf" });
        expect(await resume.isEnabled()).toBe(true);
        expect(await page.getByRole("button", { name: "Discard the partial download of library.gguf" }).count()).toBe(1);
        await row.scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("model-download-resumable"));

        files!.cutAt("library.gguf", undefined);
        const from = files!.log.length;
        await resume.click();
        await expect.poll(() => row.getAttribute("data-download-state"), { timeout: 30_000, interval: 100 }).toBe("done");
        // The server saw Range requests from the kept bytes on, none from 0.
        const starts = files!.log
            .slice(from)
            .filter((request) => request.method === "GET" && request.rangeStart !== undefined)
            .map((request) => request.rangeStart!);
        expect(Math.min(...starts)).toBe(IPULL_CHUNK_BYTES);
        const downloaded = path.join(server().dataDir, "models", "library.gguf");
        expect(sha256(fs.readFileSync(downloaded))).toBe(sha256(model));

        const entry = manager.locator(".model-library-entry", { hasText: "library.gguf" });
        await entry.waitFor({ timeout: 15_000 });
        expect(await entry.getAttribute("data-origin")).toBe("downloaded");
        expect(await entry.getAttribute("data-missing")).toBe("false");
        const fact = (key: string): Promise<string | null> => entry.locator(`[data-fact="${key}"]`).textContent();
        expect(await entry.locator(".model-library-name").textContent()).toBe("Kvault synthetic tiny");
        expect(await fact("architecture")).toBe("llama");
        expect(await fact("parameters")).toMatch(/^[\d.]+ M$/);
        expect(await fact("file-type")).toBe("MOSTLY_F16");
        expect(await fact("train-context")).toBe("4,096 tokens");
        expect(await fact("kv-per-token")).toMatch(/^[\d.]+ KiB$/);
        expect(await fact("file-size")).toMatch(/^11\.\d MiB$/);
        expect(await fact("fingerprint")).toMatch(/^[0-9a-f]{8}$/);
        const stored = JSON.parse(fs.readFileSync(path.join(server().dataDir, "models.json"), "utf8")) as {
            version: number;
            models: { path: string; source: string }[];
        };
        expect(stored).toMatchObject({ version: 1, models: [{ path: downloaded, source: `${files!.url}/library.gguf` }] });
        await entry.scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("model-library"));
        expect(app().problems).toEqual([]);
    });

    it("the library survives a page reload; Load switches the engine to an entry, Forget removes the entry and keeps the file", async () => {
        const { page } = app();
        await page.reload();
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        await openModelPanel(page);
        const manager = page.locator(".model-manager");
        const entry = manager.locator(".model-library-entry", { hasText: "library.gguf" });
        await entry.waitFor({ timeout: 15_000 });
        expect(await manager.locator(".model-download").first().getAttribute("data-download-state")).toBe("done");

        const pidBefore = server().enginePid();
        await page.getByRole("button", { name: "Load library.gguf from the library" }).click();
        await expect
            .poll(
                () => {
                    const pid = server().enginePid();
                    return pid !== undefined && pid !== pidBefore;
                },
                { timeout: 60_000, interval: 250 }
            )
            .toBe(true);
        await expect.poll(() => entry.getAttribute("data-loaded"), { timeout: 60_000, interval: 250 }).toBe("true");
        expect(await page.locator(".fact-path").textContent()).toMatch(/[\\/]models[\\/]library\.gguf$/);

        await page.getByRole("button", { name: "Forget library.gguf (the file stays)" }).click();
        await expect.poll(() => manager.locator(".model-library-entry").count(), { timeout: 15_000 }).toBe(0);
        expect(fs.existsSync(path.join(server().dataDir, "models", "library.gguf"))).toBe(true);
        expect(await manager.getByRole("alert").count()).toBe(0);
        expect(app().problems).toEqual([]);
    });
});
