import { describe, expect, it } from "vitest";
import { openView } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const NUM_POOL_PAGES = 20_000;
/** A page in the middle of the pool: at the whole map's zoom, a cell of a few pixels. */
const TARGET = 12_345;

// The host pool as the memoryview bench has it (20,000 pages), zoomed and panned as a user would.
describe("the page map's zoom and pan over 20,000 pages, in a real browser", () => {
    const kvault = useKvaultApp({
        seed: [{ id: "ui-notes", name: "Notes", colour: 0, messages: [] }],
        serveArgs: ["--pool-pages", String(NUM_POOL_PAGES)],
        viewport: { width: 1280, height: 900 }
    });
    const { screenshots } = kvault;

    it("zooms around the pointer, pans with a drag, and still names the page under the pointer", async () => {
        const { page } = kvault.app();
        await openView(page, "Memory");
        const canvas = page.locator(".page-map-canvas");
        await expect.poll(() => canvas.getAttribute("data-blocks"), { timeout: 30_000 }).toBe(String(NUM_POOL_PAGES));
        await canvas.scrollIntoViewIfNeeded();
        const columns = Number(await canvas.getAttribute("data-columns"));
        const pitch = Number(await canvas.getAttribute("data-pitch"));
        expect(pitch, "20,000 pages are small cells at the whole map's zoom").toBeLessThanOrEqual(5);
        const box = (await canvas.boundingBox())!;
        // The middle of the target's cell, in the window's pixels.
        const at = {
            x: box.x + (TARGET % columns) * pitch + (pitch - 1) / 2,
            y: box.y + Math.floor(TARGET / columns) * pitch + (pitch - 1) / 2
        };
        const tooltip = page.getByRole("tooltip");
        const wordsOf = (target: number): RegExp =>
            new RegExp(`^Host page ${target.toLocaleString("en-US")}, no owner, 0 B, free: zeroed, on the free list\\.$`);
        await page.mouse.move(at.x, at.y);
        await expect.poll(() => tooltip.textContent()).toMatch(wordsOf(TARGET));

        // Two notches of the wheel up zoom in around the pointer: the same page stays under it.
        await page.mouse.wheel(0, -400);
        await page.mouse.wheel(0, -400);
        await expect.poll(async () => Number(await canvas.getAttribute("data-zoom"))).toBeGreaterThan(3);
        const zoom = Number(await canvas.getAttribute("data-zoom"));
        expect((await canvas.boundingBox())!.y, "the wheel zoomed the map instead of scrolling the view").toBe(box.y);
        await page.mouse.move(at.x + 0.5, at.y);
        await expect.poll(() => tooltip.textContent()).toMatch(wordsOf(TARGET));
        screenshots.push(await kvault.app().screenshot("page-map-zoomed"));

        // A drag moves the grid with the pointer: the page is where the pointer let go.
        const drag = { x: -150, y: -60 };
        await page.mouse.down();
        for (let step = 1; step <= 5; step++) {
            await page.mouse.move(at.x + (drag.x * step) / 5, at.y + (drag.y * step) / 5);
        }
        await page.mouse.up();
        const moved = { x: at.x + drag.x, y: at.y + drag.y };
        await page.mouse.move(moved.x + 0.5, moved.y);
        await expect.poll(() => tooltip.textContent()).toMatch(wordsOf(TARGET));
        // One zoomed cell to the right is the next page, one below is the next row's.
        await page.mouse.move(moved.x + pitch * zoom, moved.y);
        await expect.poll(() => tooltip.textContent()).toMatch(wordsOf(TARGET + 1));
        await page.mouse.move(moved.x, moved.y + pitch * zoom);
        await expect.poll(() => tooltip.textContent()).toMatch(wordsOf(TARGET + columns));
        expect(await page.getByLabel("Page details").textContent()).toBe(
            `Page ${(TARGET + columns).toLocaleString("en-US")}: free, no owner.`
        );
        screenshots.push(await kvault.app().screenshot("page-map-panned"));

        // The keyboard: 0 shows the whole pool, + zooms in, Shift and an arrow pan, the arrows step pages in view.
        await page.mouse.move(0, 0);
        await canvas.focus();
        await page.keyboard.press("0");
        await expect.poll(() => canvas.getAttribute("data-zoom")).toBe("1.000");
        await page.keyboard.press("+");
        await page.keyboard.press("+");
        await expect.poll(() => canvas.getAttribute("data-zoom")).toBe("2.250");
        const viewX = Number(await canvas.getAttribute("data-view-x"));
        await page.keyboard.press("Shift+ArrowRight");
        await expect.poll(async () => Number(await canvas.getAttribute("data-view-x"))).toBeGreaterThan(viewX);
        await page.keyboard.press("ArrowRight");
        await expect.poll(() => tooltip.textContent()).toMatch(wordsOf(0));
        await page.keyboard.press("ArrowDown");
        await expect.poll(() => tooltip.textContent()).toMatch(wordsOf(columns));
        expect(Number(await canvas.getAttribute("data-view-x")), "the view went back to show the page the keys reached").toBe(0);

        // The control shows the whole pool again.
        await page.getByRole("button", { name: "Show the whole pool (reset the zoom)" }).click();
        await expect.poll(() => canvas.getAttribute("data-zoom")).toBe("1.000");
        expect(kvault.app().problems).toEqual([]);
    });
});
