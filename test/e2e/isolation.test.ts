import { describe, expect, it } from "vitest";
import { configureWorkspace, foldPageMap, readApp, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

describe("the isolation panel in a real browser: a fault drill, the audit, differential replay", () => {
    // Tall enough that the isolation panel's sections are all on screen for the screenshot; the page
    // map is not under test here, so it is folded and the isolation panel sits at the top of the column.
    const { app, screenshots } = useKvaultApp({ viewport: { width: 1280, height: 1500 }, prepare: ({ page }) => foldPageMap(page) });

    it("runs the flipped-byte drill: the checksum guard fires, the victim stays clean, and the leak shows with the guard off", async () => {
        const { page } = app();
        const drill = page.locator('[data-drill-id="flipped-byte"]');
        await drill.waitFor({ timeout: 30_000 });
        expect(await page.locator("[data-drill-id]").evaluateAll((items) => items.map((item) => item.getAttribute("data-drill-id"))))
            .toEqual(["foreign-manifest", "flipped-byte", "skipped-scrub", "late-write"]);

        await page.getByRole("button", { name: "Run the flipped-byte drill" }).click();
        await expect.poll(() => drill.getAttribute("data-drill-state"), { timeout: 5_000 }).toBe("running");
        expect(await page.getByRole("button", { name: "Run the late-write drill" }).isDisabled(), "one drill at a time").toBe(true);
        await expect.poll(() => drill.getAttribute("data-drill-state"), { timeout: 150_000, interval: 250 }).toBe("done");

        const report = drill.locator(".drill-report");
        expect(await report.getAttribute("data-guard-fired")).toBe("true");
        expect(await report.getAttribute("data-guard-code")).toBe("handoff_checksum_mismatch");
        expect(await report.getAttribute("data-victim-clean")).toBe("true");
        expect(await report.getAttribute("data-leak-observed")).toBe("true");
        expect(await report.getAttribute("data-passed")).toBe("true");
        expect(await drill.locator(".drill-guard").textContent()).toMatch(/^Guard fired: handoff_checksum_mismatch/);
        expect(await drill.locator(".drill-leak").textContent()).toMatch(/^Leak observed with the guard off./);
        expect((await drill.locator(".drill-leak .drill-detail").textContent())!.length).toBeGreaterThan(10);
        expect(await page.getByRole("button", { name: "Run the late-write drill" }).isEnabled()).toBe(true);
        expect(app().problems).toEqual([]);
    });

    it("runs the audit on demand, and it reports OK over every page of the pool", async () => {
        const { page } = app();
        const audit = page.locator("[data-audit-state]");
        await expect.poll(() => audit.getAttribute("data-audit-state"), { timeout: 30_000 }).toBe("ok"); // the automatic one
        const before = await audit.locator(".isolation-scope").textContent();
        await page.waitForTimeout(1_100); // the next answer's time differs by at least a second
        await page.getByRole("button", { name: "Run audit now" }).click();
        await expect.poll(() => audit.locator(".isolation-scope").textContent(), { timeout: 10_000 }).not.toBe(before);
        expect(await audit.getAttribute("data-audit-state")).toBe("ok");
        expect(await audit.getAttribute("data-num-violations")).toBe("0");
        expect(await audit.getAttribute("data-num-pages-checked")).toBe("96");
        expect(await audit.getByRole("status").textContent()).toBe("OK: I1–I7 hold");
        expect(await audit.locator(".isolation-scope").textContent()).toMatch(/^96 pages checked \(\d+ sealed re-checksummed, \d+ free scanned for zeros\) in [\d.]+ m?s, at /);
    });

    it("replays a finished greedy turn alone in a fresh context: identical, token for token", async () => {
        const { page } = app();
        await configureWorkspace(page, { temperature: 0, maxTokens: 12 });
        await sendMessage(page, "Tell me about pages");
        await expect.poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), { timeout: 120_000, interval: 250 })
            .toEqual(["user", "assistant"]);
        const workspace = (await readApp(page)).items[0]!;

        const turn = page.locator("[data-request-id]");
        await expect.poll(() => turn.count(), { timeout: 15_000 }).toBe(1);
        const requestId = (await turn.getAttribute("data-request-id"))!;
        expect(requestId).toMatch(/^turn-[0-9a-f]{32}$/);
        expect(await turn.locator(".isolation-item-title").textContent()).toMatch(new RegExp(`^${workspace.name} · turn-[0-9a-f]{8}… · \\d+ tokens?$`));

        await page.getByRole("button", { name: `Replay ${requestId.slice(0, 13)}… of ${workspace.name}` }).click();
        await expect.poll(() => turn.getAttribute("data-replay-state"), { timeout: 60_000, interval: 200 }).toBe("identical");
        expect(await turn.getByRole("status").textContent()).toMatch(/^Identical over \d+ tokens? \([\d.]+ m?s\)$/);

        await page.locator(".isolation-panel").scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("isolation-drill"));
        expect(app().problems).toEqual([]);
    });
});
