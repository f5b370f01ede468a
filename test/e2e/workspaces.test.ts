import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
    canvasPixelsOfColour,
    configureWorkspace,
    newWorkspace,
    openView,
    readApp,
    selectWorkspace,
    sendMessage,
    storedWorkspaces,
    type WorkspaceItem
} from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// Two decode sequences, a 2,048-token window and 384 pages of 16 tokens (--context 2048 here). The prompts are ones the
// generated model answers greedily to the full Max tokens, so turns last long enough to watch.
// Handoff pages live for
// milliseconds; a workspace swapped out of its decode sequence holds pages until it runs again
// or is deleted, which is what the page map shows for long enough to look at.
/**
 * Each of the first two answers, in tokens. The generated model answers both prompts greedily to
 * the full length (checked: neither ends in an end-of-generation token before 1,800 tokens), so
 * neither can end while the other is sent, at any decode speed of the tiny model seen so far.
 */
const ANSWER_TOKENS = 1_200;
/**
 * The README's picture: two workspaces streaming at once, each in its colour on the page map. The
 * moment below is saved there when this variable is 1 (a run that should refresh it), and only under
 * test/.artifacts otherwise, so that a test run leaves the checkout as it was.
 */
const UPDATE_FRONT_PAGE_IMAGE = "KVAULT_UPDATE_FRONT_PAGE_IMAGE";
const FRONT_PAGE_IMAGE = path.resolve(import.meta.dirname, "..", "..", "docs", "images", "kvault.png");

describe("workspaces in a real browser: two stream at once, the page map follows them", () => {
    // A 2,048-token window, so each of the first two answers can run to 1,200 tokens, and 10 ms per
    // token (the streaming demo mode): seconds of streaming however fast this machine decodes (the
    // generated model's local build makes 1,800 tokens a second on 2 cores; 150 tokens ended
    // before the second was sent).
    const { app, screenshots } = useKvaultApp({ serveArgs: ["--context", "2048", "--stream-demo", "10"] });
    let first: WorkspaceItem;
    let second: WorkspaceItem;

    it("streams answers in two workspaces at the same time, each in its own decode sequence", async () => {
        const { page } = app();
        first = (await readApp(page)).items[0]!;
        expect(first.name).toBe("Workspace 1");
        await configureWorkspace(page, { temperature: 0, maxTokens: ANSWER_TOKENS });
        second = await newWorkspace(page);
        await configureWorkspace(page, { temperature: 0, maxTokens: ANSWER_TOKENS });
        expect(second.colour).not.toBe(first.colour);

        await selectWorkspace(page, "Workspace 1");
        await sendMessage(page, "Tell me about the first page");
        await selectWorkspace(page, "Workspace 2");
        await sendMessage(page, "And now about the second one");

        // Sample the sidebar (both workspaces' turns) and the decode sequences until both answers are in.
        const samples: Awaited<ReturnType<typeof readApp>>[] = [];
        const deadline = Date.now() + 180_000;
        let screenshotTaken = false;
        for (;;) {
            const sample = await readApp(page);
            samples.push(sample);
            const [a, b] = [first, second].map((workspace) => sample.items.find((item) => item.id === workspace.id)!);
            if (!screenshotTaken && a!.phase === "running" && b!.phase === "running" && a!.streamedChars > 0 && b!.streamedChars > 0) {
                const screenshot = await app().screenshot("workspaces-two-streaming");
                screenshots.push(screenshot);
                if (process.env[UPDATE_FRONT_PAGE_IMAGE] === "1") {
                    fs.copyFileSync(screenshot, FRONT_PAGE_IMAGE);
                }
                screenshotTaken = true;
            }
            if (a!.phase === "idle" && b!.phase === "idle") {
                break;
            }
            expect(Date.now(), "both answers should finish within 3 minutes").toBeLessThan(deadline);
            await page.waitForTimeout(150);
        }

        const both = samples.map((sample) => [first, second].map((workspace) => sample.items.find((item) => item.id === workspace.id)!));
        const bothRunning = both.filter(
            ([a, b]) => a!.phase === "running" && b!.phase === "running" && a!.streamedChars > 0 && b!.streamedChars > 0
        );
        expect(bothRunning.length, "a moment when both workspaces had streamed text and neither had finished").toBeGreaterThanOrEqual(2);
        const [early, late] = [bothRunning[0]!, bothRunning.at(-1)!];
        expect(late[0]!.streamedChars, "the first workspace's text grew while the second was still streaming").toBeGreaterThan(
            early[0]!.streamedChars
        );
        expect(late[1]!.streamedChars, "the second workspace's text grew while the first was still streaming").toBeGreaterThan(
            early[1]!.streamedChars
        );
        expect(
            samples.some((sample) =>
                [first, second].every((workspace) => sample.slots.some((slot) => slot.workspace === workspace.id && slot.running))
            ),
            "both workspaces shown running in decode sequences at once"
        ).toBe(true);

        const stored = await storedWorkspaces(page);
        for (const workspace of [first, second]) {
            const messages = stored.find((item) => item.id === workspace.id)!.messages;
            expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
            expect(messages[1]!.content.length).toBeGreaterThan(0);
        }
        // The answer on screen is the stored one, for the workspace on screen.
        await expect.poll(() => page.locator(".message-assistant:not(.message-live)").count()).toBe(1);
        expect(app().problems).toEqual([]);
    });

    it("shows pages in each workspace's colour while it is swapped out for others, and every page free once those workspaces are deleted", async () => {
        const { page } = app();
        const third = await newWorkspace(page);
        await configureWorkspace(page, { temperature: 0, maxTokens: 200 });
        await sendMessage(page, "A third workspace needs a decode sequence");
        const fourth = await newWorkspace(page);
        await configureWorkspace(page, { temperature: 0, maxTokens: 200 });
        await sendMessage(page, "So does a fourth");

        // Running the third and fourth swaps the idle first and second out of their sequences into sealed pages.
        await expect
            .poll(async () => (await readApp(page)).owners.map((row) => row.owner).sort(), { timeout: 60_000, interval: 150 })
            .toEqual([first.id, second.id].sort());
        const during = await readApp(page);
        for (const workspace of [first, second]) {
            const row = during.owners.find((candidate) => candidate.owner === workspace.id)!;
            expect(row).toMatchObject({ name: workspace.name, colour: workspace.colour });
            expect(row.numPages).toBeGreaterThan(0);
            expect(await canvasPixelsOfColour(page, workspace.colour), `${workspace.name}'s pages drawn in its colour`).toBeGreaterThan(0);
        }
        expect(during.free).toBe(during.numPages - during.owners.reduce((sum, row) => sum + row.numPages, 0));
        expect(
            during.items.filter((item) => item.id === third.id || item.id === fourth.id).some((item) => item.phase !== "idle"),
            "the pages are there while the other workspaces run"
        ).toBe(true);

        // Hovering a page names its state and owner.
        await openView(page, "Memory");
        const canvas = page.locator(".page-map-canvas");
        await canvas.hover({ position: { x: 5, y: 5 } });
        await expect.poll(() => page.getByLabel("Page details").textContent()).toMatch(/^Page 0: (free, no owner|\w+, owner .+)\.$/);
        screenshots.push(await app().screenshot("workspaces-page-map-swapped"));

        await expect
            .poll(async () => (await readApp(page)).items.every((item) => item.phase === "idle"), { timeout: 180_000, interval: 250 })
            .toBe(true);

        for (const workspace of [first, second]) {
            await selectWorkspace(page, workspace.name);
            await page.getByRole("button", { name: `Delete ${workspace.name}`, exact: true }).click();
            const dialog = page.getByRole("dialog", { name: `Delete “${workspace.name}”?` });
            await expect.poll(() => dialog.isVisible()).toBe(true);
            await dialog.getByRole("button", { name: `Delete ${workspace.name} for good` }).click();
            await expect.poll(async () => (await readApp(page)).items.some((item) => item.id === workspace.id)).toBe(false);
        }

        await expect
            .poll(
                async () => {
                    const after = await readApp(page);
                    return { owners: after.owners.length, free: after.free };
                },
                { timeout: 30_000, interval: 150 }
            )
            .toEqual({ owners: 0, free: during.numPages });
        await openView(page, "Memory"); // the map as drawn now, every page free
        for (const workspace of [first, second]) {
            expect(await canvasPixelsOfColour(page, workspace.colour)).toBe(0);
        }
        expect((await storedWorkspaces(page)).map((workspace) => workspace.id)).toEqual([third.id, fourth.id]);
        screenshots.push(await app().screenshot("workspaces-page-map-all-free"));
        expect(app().problems).toEqual([]);
    });
});
