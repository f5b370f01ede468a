import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openView, readApp, sendMessage } from "./support/appDriver.js";
import { openKvault, type KvaultPage } from "./support/openKvault.js";
import { seedChats } from "./support/seedChats.js";
import { startKvaultServer, type KvaultServer } from "./support/startKvaultServer.js";

/** Long enough to go through prefill and the handoff (over the 128 tokens decode evaluates in place), with a word found nowhere else. */
const longMessage =
    "Keep the word xylophoneoctopus in mind. " +
    Array.from({ length: 10 }, (_, index) => `page ${index} holds sixteen positions`).join(", ");

describe("the Memory view's timeline, in a real browser", () => {
    const screenshots: string[] = [];
    let dataDir: string | undefined;
    let server: KvaultServer | undefined;
    let app: KvaultPage | undefined;

    beforeAll(async () => {
        dataDir = seedChats([{ id: "ui-notes", name: "Notes", colour: 0, messages: [] }]);
        server = await startKvaultServer({ dataDir });
        app = await openKvault(await server.loginUrl(), { width: 1280, height: 900 });
    });

    afterAll(async () => {
        await app?.close();
        await server?.stop();
        if (dataDir !== undefined) {
            fs.rmSync(dataDir, { recursive: true, force: true });
        }
        console.log(`screenshots:\n${screenshots.join("\n")}`);
    });

    it("lists a handoff's events, and scrubbing back to its seal shows its pages sealed; live shows them free again", async () => {
        const { page } = app!;
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
        const pool = timeline.getByLabel("Pool at the scrubbed event");
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
        screenshots.push(await app!.screenshot("memory-timeline-scrubbed"));

        // the slider's end is live again
        const slider = timeline.getByRole("slider", { name: "Scrub the timeline" });
        await slider.focus();
        await slider.press("End");
        await expect.poll(() => pool.textContent()).toMatch(/^Pool now: /);
        expect(await pool.getAttribute("data-sealed")).toBe("0");

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
        expect(app!.problems).toEqual([]);
    });
});
