import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { canvasPixelsOfColour, openView, readApp, sendMessage } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const BLUE = "#3b82f6"; // workspacePalette[0], the seeded workspace's swatch

/** Long enough to go through prefill and the handoff (over the 128 tokens decode evaluates in place), with a word found nowhere else. */
const longMessage =
    "Keep the word xylophoneoctopus in mind. " +
    Array.from({ length: 10 }, (_, index) => `page ${index} holds sixteen positions`).join(", ");

describe("the Memory view's timeline, in a real browser", () => {
    const kvault = useKvaultApp({
        seed: [{ id: "ui-notes", name: "Notes", colour: 0, messages: [] }],
        viewport: { width: 1280, height: 900 }
    });
    const { screenshots } = kvault;

    it("lists a handoff's events, and scrubbing back to its seal draws its pages sealed on the page map; live shows them free again", async () => {
        const { page } = kvault.app();
        await sendMessage(page, longMessage);
        await expect
            .poll(async () => (await readApp(page)).items.find((item) => item.id === "ui-notes")?.phase, {
                timeout: 120_000,
                interval: 250
            })
            .toBe("idle");

        await openView(page, "Memory");
        const timeline = page.getByRole("region", { name: "Memory timeline" });
        const sealed = timeline.locator('li[data-kind="sealed"]').first();
        await sealed.waitFor({ timeout: 30_000 });
        await expect.poll(() => timeline.locator('li[data-kind="handoffStarted"]').first().textContent()).toMatch(/handoffStarted Notes/);
        expect(await sealed.textContent()).toMatch(/sealed Notes pages \d+(–\d+)? → sealed ok/);
        // The replay is drawn on the page map itself, above the timeline, not in a grid of its own.
        const pool = page.locator('.kv-section[data-kind="pages"]').getByLabel("Pool at the scrubbed event");
        const poolSection = page.locator('.kv-section[data-kind="pages"]');
        // now: the turn has ended, its pages released and scrubbed
        await expect.poll(() => pool.getAttribute("data-sealed")).toBe("0");
        expect(await pool.textContent()).toMatch(/^Pool now: /);

        // back to the moment the prefill's pages were sealed
        await sealed.locator("button").click();
        const numSealedPages = /pages (\d+)–(\d+)/.exec((await sealed.textContent()) ?? "");
        const expected = numSealedPages === null ? 1 : Number(numSealedPages[2]) - Number(numSealedPages[1]) + 1;
        await expect.poll(() => pool.getAttribute("data-sealed")).toBe(String(expected));
        expect(await pool.textContent()).toMatch(/^Pool after #\d+ sealed: /);
        expect(await sealed.getAttribute("aria-current")).toBe("true");
        const sealSeq = /#(\d+)/.exec((await sealed.textContent()) ?? "")![1]!;
        expect(await poolSection.getAttribute("data-replay")).toBe(sealSeq);
        expect(await pool.textContent()).toMatch(/sealed \(checksummed\)$/);
        await expect.poll(() => canvasPixelsOfColour(page, BLUE), { timeout: 5_000 }).toBeGreaterThan(0);
        // The map's own hover names a replayed page: its owner and state then, and the seal's checksum.
        const firstSealed = Number(/pages? (\d+)/.exec((await sealed.textContent()) ?? "")![1]);
        const canvas = page.locator(".page-map-canvas");
        const columns = Number(await canvas.getAttribute("data-columns"));
        const pitch = Number(await canvas.getAttribute("data-pitch"));
        await canvas.hover({ position: { x: (firstSealed % columns) * pitch + 2, y: Math.floor(firstSealed / columns) * pitch + 2 } });
        await expect
            .poll(() => page.getByRole("tooltip").textContent())
            .toMatch(
                new RegExp(
                    `^Host page ${firstSealed}, owner Notes, sealed: .*, generation \\d+, checksum [0-9a-f]+, as event #${sealSeq} left it\\.$`
                )
            );
        screenshots.push(await kvault.app().screenshot("memory-timeline-scrubbed"));

        // Play walks the map on from the seal through the handoff's later events, one at a time, to now.
        const play = timeline.getByRole("button", { name: "Play the events on the map, one at a time, up to now" });
        await play.click();
        await expect
            .poll(() => pool.textContent(), { timeout: 10_000, interval: 100 })
            .toMatch(/^Pool after #\d+ verified: .* — the pages' checksums verified: decode reads them into its sequence$/);
        await expect.poll(() => pool.textContent(), { timeout: 20_000 }).toMatch(/^Pool now: /);
        expect(await play.getAttribute("aria-pressed")).toBe("false");
        await sealed.locator("button").click();
        await expect.poll(() => pool.getAttribute("data-sealed")).toBe(String(expected));

        // the slider's end is live again
        const slider = timeline.getByRole("slider", { name: "Scrub the timeline" });
        await slider.focus();
        await slider.press("End");
        await expect.poll(() => pool.textContent()).toMatch(/^Pool now: /);
        expect(await pool.getAttribute("data-sealed")).toBe("0");
        expect(await poolSection.getAttribute("data-replay")).toBe("");
        await expect.poll(() => canvasPixelsOfColour(page, BLUE), { timeout: 5_000 }).toBe(0);

        // the export: the record's header, then the events, and no word of the message
        const [download] = await Promise.all([
            page.waitForEvent("download"),
            timeline.getByRole("button", { name: "Export the memory record as JSON Lines" }).click()
        ]);
        const jsonl = fs.readFileSync((await download.path())!, "utf8");
        const lines = jsonl.trimEnd().split("\n");
        expect(JSON.parse(lines[0]!)).toMatchObject({ kind: "kvaultMemoryRecord", numEvents: lines.length - 1 });
        expect(lines.some((line) => line.includes('"kind":"sealed"'))).toBe(true);
        expect(jsonl).not.toContain("xylophoneoctopus");
        expect(jsonl).not.toContain("sixteen");
        expect(kvault.app().problems).toEqual([]);
    });
});
