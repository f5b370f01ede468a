import { describe, expect, it } from "vitest";
import { canvasPixelsOfColour, readApp, sendMessage } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const BLUE = "#3b82f6"; // workspacePalette[0], the seeded workspace's swatch
/** Long enough to go through prefill and the handoff (over the 128 tokens decode evaluates in place; about 240 of the 512 window). */
const longMessage = Array.from({ length: 10 }, (_, index) => `page ${index} holds sixteen positions`).join(", ");

describe("the page map's demo mode, in a real browser", () => {
    const kvault = useKvaultApp({
        seed: [{ id: "ui-notes", name: "Notes", colour: 0, messages: [] }],
        serveArgs: ["--handoff-demo", "1500"],
        viewport: { width: 1280, height: 900 }
    });
    const { screenshots } = kvault;

    it("shows a handoff as it happens: the prefill sequence in the workspace's colour, then its sealed pages, then decode", async () => {
        const { page } = kvault.app();
        const handoff = page.locator(".kv-handoffs");
        const prefill = page.locator('.kv-section[data-kind="prefill"] canvas').first(); // the first handoff takes prefill sequence 1
        await sendMessage(page, longMessage);

        await expect.poll(() => handoff.textContent(), { timeout: 60_000, interval: 100 }).toMatch(/^Handoff for Notes: sealing pages/);
        expect(await prefill.getAttribute("data-workspace")).toBe("ui-notes");
        expect(Number(await prefill.getAttribute("data-held-blocks"))).toBeGreaterThan(0);
        screenshots.push(await kvault.app().screenshot("page-map-handoff-prefill"));

        await expect.poll(() => handoff.textContent(), { timeout: 30_000, interval: 100 }).toMatch(/^Handoff for Notes: pages to decode/);
        // .page-map-canvas is the host pages' canvas: the sealed pages are drawn in the owner's colour.
        await expect.poll(() => canvasPixelsOfColour(page, BLUE), { timeout: 5_000, interval: 100 }).toBeGreaterThan(0);
        expect(await prefill.getAttribute("data-workspace")).toBe("");
        screenshots.push(await kvault.app().screenshot("page-map-handoff-pages"));

        await expect
            .poll(async () => (await readApp(page)).items.find((item) => item.id === "ui-notes")?.phase, {
                timeout: 120_000,
                interval: 250
            })
            .toBe("idle");
        await expect.poll(() => handoff.count()).toBe(0);
        const decode = page.locator('.kv-sequence-canvas[data-workspace="ui-notes"]');
        expect(Number(await decode.getAttribute("data-held-blocks"))).toBeGreaterThan(8);
        screenshots.push(await kvault.app().screenshot("page-map-handoff-decode"));
        expect(kvault.app().problems).toEqual([]);
    });
});
