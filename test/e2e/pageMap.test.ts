import { describe, expect, it } from "vitest";
import { configureWorkspace, openView, readApp, sendMessage } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const BLUE = "#3b82f6"; // workspacePalette[0], the seeded workspace's swatch

// Under the default engine settings (4 decode sequences, one prefill sequence each, a 4,096-token
// window in pages of 256 tokens): what a new user sees, not the small e2eServeArgs geometry.
describe("the page map after a chat under default settings, in a real browser", () => {
    const kvault = useKvaultApp({
        seed: [{ id: "ui-notes", name: "Notes", colour: 0, messages: [] }],
        engineArgs: false,
        viewport: { width: 1280, height: 900 }
    });
    const { screenshots } = kvault;

    /** Pixels of the canvas matching `selector` that are exactly `hex`. */
    const pixelsOfColour = (selector: string, hex: string): Promise<number> =>
        kvault.app().page.evaluate<number>(`(() => {
            const canvas = document.querySelector(${JSON.stringify(selector)});
            if (canvas === null) return -1;
            const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
            const [r, g, b] = [1, 3, 5].map((index) => parseInt(${JSON.stringify(hex)}.slice(index, index + 2), 16));
            let count = 0;
            for (let index = 0; index < data.length; index += 4)
                if (data[index] === r && data[index + 1] === g && data[index + 2] === b && data[index + 3] === 255) count++;
            return count;
        })()`);

    it("draws the workspace's decode blocks in its colour, and names the owner on hover", async () => {
        const { page } = kvault.app();
        const sections = page.locator(".kv-section");
        await expect
            .poll(() => sections.evaluateAll((elements) => elements.map((element) => element.getAttribute("aria-label"))))
            .toEqual([
                "Prefill sequence 1",
                "Prefill sequence 2",
                "Prefill sequence 3",
                "Prefill sequence 4",
                "Host pages",
                "Decode sequence 1",
                "Decode sequence 2",
                "Decode sequence 3",
                "Decode sequence 4"
            ]);
        await openView(page, "Memory");
        expect(await page.getByText("A page holds the KV of a fixed number of token positions").isVisible()).toBe(true);

        // The seeded 8 tokens take a few milliseconds under default settings, too short to be seen
        // running; up to 300 (the tiny model stops earlier, inside the first 256-position block) are not.
        await configureWorkspace(page, { temperature: 0, maxTokens: 300 });
        const workspaceSettings = page.locator(".workspace-settings");
        await workspaceSettings.evaluate((element) => element.removeAttribute("open"));
        await expect.poll(() => workspaceSettings.getAttribute("open")).toBeNull();
        await sendMessage(page, "Tell me about pages.");
        // The answer is in (the question and it) and the turn is over. Polling for "running" in
        // between raced the turn: with a fast binary the tiny model's answer ends between polls.
        await expect
            .poll(
                async () => {
                    const item = (await readApp(page)).items.find((candidate) => candidate.id === "ui-notes");
                    return item === undefined ? undefined : { phase: item.phase, numMessages: item.numMessages };
                },
                { timeout: 120_000, interval: 250 }
            )
            .toEqual({ phase: "idle", numMessages: 2 });

        const held = page.locator('.kv-sequence-canvas[data-workspace="ui-notes"]');
        await expect.poll(() => held.count(), { timeout: 10_000 }).toBe(1);
        expect(Number(await held.getAttribute("data-held-blocks"))).toBeGreaterThan(0);
        const selector = '.kv-sequence-canvas[data-workspace="ui-notes"]';
        expect(await pixelsOfColour(selector, BLUE), "the decode blocks are drawn in the workspace's colour").toBeGreaterThan(0);
        const section = page.locator(".kv-section", { has: held });
        await expect.poll(() => section.locator(".kv-section-summary").textContent()).toMatch(/^Notes: \d+ of 4,096 tokens$/);

        await openView(page, "Memory");
        await held.hover({ position: { x: 3, y: 3 } });
        const tooltip = page.getByRole("tooltip");
        await expect
            .poll(() => tooltip.textContent())
            .toMatch(/^Decode sequence \d, block 1, owner Notes, positions 0–\d+, [\d.]+ KiB, kept between turns\.$/);
        expect(await tooltip.textContent()).not.toMatch(/numTokens|heldTokens|ownerSlots/);
        screenshots.push(await kvault.app().screenshot("page-map-decode-blocks"));

        // The keyboard reaches the same words: focus the section and step to the next block.
        await page.mouse.move(0, 0);
        await held.focus();
        await page.keyboard.press("ArrowRight");
        await page.keyboard.press("ArrowRight");
        // A block holds 256 positions: a short chat's second block is held from 256 on, or not used yet.
        await expect.poll(() => tooltip.textContent()).toMatch(/^Decode sequence \d, block 2, (owner Notes|no owner), positions 256–/);
        expect(kvault.app().problems).toEqual([]);
    });

    it("says where each context's KV lives: on the CPU, in RAM, beside the pages", async () => {
        const { page } = kvault.app();
        const roles = page.locator(".role-list li[data-role]");
        await expect
            .poll(() =>
                roles.evaluateAll((elements) =>
                    elements.map((element) => [element.getAttribute("data-role"), element.getAttribute("data-kv-memory")])
                )
            )
            .toEqual([
                ["prefill", "ram"],
                ["decode", "ram"]
            ]);
        expect(await roles.first().textContent()).toMatch(/tokens each, KV in RAM$/);
        expect(await page.locator(".context-meter-capacities").textContent()).toContain("per sequence (KV in RAM)");
        expect(kvault.app().problems).toEqual([]);
    });
});
