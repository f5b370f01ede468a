import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { openModelPanel } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

describe("the model manager downloads a model by URL: progress, cancel, then load (loopback only)", () => {
    const { app, server, screenshots } = useKvaultApp({
        viewport: { width: 1280, height: 1300 },
        prepare: ({ page }) => openModelPanel(page)
    });
    let files: http.Server | undefined;
    let base = "";

    beforeAll(async () => {
        const model = fs.readFileSync(ensureGeneratedModel("tiny"));
        // The tiny model whole (/tiny.gguf) or slowly, in 200 chunks 100 ms apart (/slow.gguf).
        files = http.createServer((request, response) => {
            const slow = (request.url ?? "").startsWith("/slow.gguf");
            if (!slow && !(request.url ?? "").startsWith("/tiny.gguf")) {
                response.writeHead(404).end();
                return;
            }
            response.writeHead(200, { "content-type": "application/octet-stream", "content-length": model.length });
            if (request.method === "HEAD" || !slow) {
                response.end(request.method === "HEAD" ? undefined : model);
                return;
            }
            const chunk = Math.ceil(model.length / 200);
            let offset = 0;
            const timer = setInterval(() => {
                if (offset >= model.length) {
                    clearInterval(timer);
                    response.end();
                    return;
                }
                response.write(model.subarray(offset, offset + chunk));
                offset += chunk;
            }, 100);
            response.on("close", () => clearInterval(timer));
        });
        await new Promise<void>((resolve) => files!.listen(0, "127.0.0.1", resolve));
        base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
        files?.closeAllConnections();
        await new Promise<void>((resolve) => (files === undefined ? resolve() : files.close(() => resolve())));
    });

    it("shows a slow download's progress and speed, and Cancel stops it", async () => {
        const { page } = app();
        const manager = page.locator(".model-manager");
        await page.getByLabel("Download a model (URL or hf: reference)").fill(`${base}/slow.gguf`);
        await page.getByRole("button", { name: "Download the model" }).click();
        const row = manager.locator(".model-download").first();
        await expect.poll(() => row.getAttribute("data-download-state"), { timeout: 15_000 }).toBe("downloading");
        const progress = page.getByRole("progressbar", { name: "Download progress of slow.gguf" });
        await expect.poll(async () => Number(await progress.getAttribute("value")), { timeout: 15_000, interval: 100 }).toBeGreaterThan(0);
        await expect
            .poll(() => row.locator(".model-download-status").textContent(), { timeout: 15_000, interval: 100 })
            .toMatch(/^\d+% · .+ of .+ · [\d.]+ MB\/s$/);
        await manager.scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("model-download-progress"));
        await page.getByRole("button", { name: "Cancel the download of slow.gguf" }).click();
        await expect.poll(() => row.getAttribute("data-download-state"), { timeout: 15_000 }).toBe("cancelled");
        expect(await row.getByRole("button").count()).toBe(0);
        expect(app().problems).toEqual([]);
    });

    it("a finished download has a Load button that switches the engine to the downloaded file", async () => {
        const { page } = app();
        const manager = page.locator(".model-manager");
        await page.getByLabel("Download a model (URL or hf: reference)").fill(`${base}/tiny.gguf`);
        await page.getByRole("button", { name: "Download the model" }).click();
        const row = manager.locator(".model-download").nth(1);
        await expect.poll(() => row.getAttribute("data-download-state"), { timeout: 30_000 }).toBe("done");
        const pidBefore = server().enginePid();
        await page.getByRole("button", { name: "Load the downloaded model tiny.gguf" }).click();
        await expect
            .poll(
                () => {
                    const pid = server().enginePid();
                    return pid !== undefined && pid !== pidBefore;
                },
                { timeout: 60_000, interval: 250 }
            )
            .toBe(true);
        await expect.poll(() => page.locator(".fact-path").textContent(), { timeout: 60_000 }).toMatch(/[\\/]models[\\/]tiny\.gguf$/);
        expect(await manager.getByRole("alert").count()).toBe(0);
        screenshots.push(await app().screenshot("model-download-loaded"));
        expect(app().problems).toEqual([]);
    });

    it("a file: URL is refused with download_source_invalid", async () => {
        const { page } = app();
        const manager = page.locator(".model-manager");
        await page.getByLabel("Download a model (URL or hf: reference)").fill("file:///etc/passwd");
        await page.getByRole("button", { name: "Download the model" }).click();
        const alert = manager.locator('[role="alert"][data-error-code="download_source_invalid"]');
        await alert.waitFor({ timeout: 15_000 });
        expect(await alert.textContent()).toMatch(
            /Could not download \(download_source_invalid\)\. Downloads use http:\/\/, https:\/\/ or hf:/
        );
        expect(await manager.locator(".model-download").count()).toBe(2);
    });
});
