import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { configureWorkspace, openView, readApp, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

/** A state an element passed through, with whether a button was disabled at that moment. */
interface RecordedState {
    readonly state: string | null;
    readonly buttonDisabled: boolean | undefined;
}

/**
 * Records, in the page and as it happens, every value `attribute` of the element matching
 * `selector` takes, each with whether the button labelled `buttonLabel` was disabled then: a run on
 * a fast machine can start and end between two polls, so "it was running, and the button was
 * disabled meanwhile" is read from the record, not from a poll that may miss it. Returns the reader.
 */
async function recordStates(page: Page, selector: string, attribute: string, buttonLabel: string): Promise<() => Promise<RecordedState[]>> {
    const key = `__recorded_${attribute.replace(/\W/g, "_")}`;
    const [selectorText, attributeText, buttonText, keyText] = [selector, attribute, `button[aria-label="${buttonLabel}"]`, key].map(
        (text) => JSON.stringify(text)
    );
    // a string, as the page runs it: this project's Node types have no DOM
    await page.evaluate(`(() => {
        const records = [];
        window[${keyText}] = records;
        new MutationObserver(() => {
            const state = document.querySelector(${selectorText})?.getAttribute(${attributeText}) ?? null;
            if (records.length === 0 || records[records.length - 1].state !== state) {
                records.push({ state, buttonDisabled: document.querySelector(${buttonText})?.disabled });
            }
        }).observe(document.body, { subtree: true, attributes: true, attributeFilter: [${attributeText}] });
    })()`);
    return () => page.evaluate<RecordedState[]>(`window[${keyText}]`);
}

describe("the isolation panel in a real browser: a fault drill, the audit, the canary probe, differential replay", () => {
    // Tall enough that the Isolation view's sections are all on screen for the screenshot; a test that chats
    // comes back to the view after (sendMessage shows the Chats view).
    const { app, screenshots } = useKvaultApp({
        viewport: { width: 1280, height: 1500 },
        prepare: ({ page }) => openView(page, "Isolation")
    });

    it("runs the flipped-byte drill: the checksum guard fires, the victim stays clean, and the leak shows with the guard off", async () => {
        const { page } = app();
        const drill = page.locator('[data-drill-id="flipped-byte"]');
        await drill.waitFor({ timeout: 30_000 });
        expect(
            await page.locator("[data-drill-id]").evaluateAll((items) => items.map((item) => item.getAttribute("data-drill-id")))
        ).toEqual([
            "foreign-manifest",
            "flipped-byte",
            "skipped-scrub",
            "late-write",
            "undersized-prefill-pool",
            "dropped-pages",
            "replayed-completion"
        ]);

        const drillStates = await recordStates(page, '[data-drill-id="flipped-byte"]', "data-drill-state", "Run the late-write drill");
        await page.getByRole("button", { name: "Run the flipped-byte drill" }).click();
        await expect.poll(() => drill.getAttribute("data-drill-state"), { timeout: 150_000, interval: 250 }).toBe("done");
        // one drill at a time: while it ran, the other drill could not start
        expect(await drillStates()).toEqual([
            { state: "running", buttonDisabled: true },
            { state: "done", buttonDisabled: false }
        ]);

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
        expect(await audit.locator(".isolation-scope").textContent()).toMatch(
            /^96 pages checked \(\d+ sealed re-checksummed, \d+ free scanned for zeros\) in [\d.]+ m?s, at /
        );
    });

    it("shows the engine's own audits with their cost per page, and runs the canary probe from the panel: every probe passes", async () => {
        const { page } = app();
        const audit = page.locator("[data-audit-state]");
        await expect
            .poll(() => audit.locator("[data-audit-cadence]").getAttribute("data-audit-cadence"), { timeout: 10_000 })
            .toBe("engine");
        expect(await audit.locator("[data-audit-cadence]").textContent()).toMatch(
            /The engine audits every 1\.0 s, its byte scans in slices so streams do not stall: [\d,]+ audits so far, 0 with violations\.$/
        );
        expect(await audit.locator("[data-audit-cost]").textContent()).toMatch(
            /^Cost: metadata [\d.]+ µs a page, byte scan [\d.]+ µs a page in [\d,]+ slices?, longest pause [\d.]+ m?s\.$/
        );

        const canary = page.locator("[data-canary-state]");
        const run = page.getByRole("button", { name: "Run the canary probe" });
        const canaryStates = await recordStates(page, "[data-canary-state]", "data-canary-state", "Run the canary probe");
        await run.click();
        await expect.poll(() => canary.getAttribute("data-canary-state"), { timeout: 120_000, interval: 250 }).toBe("passed");
        // one canary run at a time: its button was disabled while it ran
        expect(await canaryStates()).toEqual([
            { state: "running", buttonDisabled: true },
            { state: "passed", buttonDisabled: false }
        ]);

        const outcomes = await canary
            .locator("[data-probe-id]")
            .evaluateAll((items) => items.map((item) => [item.getAttribute("data-probe-id"), item.getAttribute("data-outcome")]));
        expect(outcomes).toEqual([
            ["text-recall", "passed"],
            ["text-cue", "passed"],
            ["logprobs", "passed"],
            ["kv-pages", "passed"],
            ["kv-sequence", "passed"]
        ]);
        expect(await canary.getByRole("status").textContent()).toMatch(/^Passed: 5 of 5 probes found nothing of A in B in [\d.]+ m?s$/);
        expect(await canary.locator(".canary-markers").textContent()).toMatch(
            /^Markers KV-CANARY-[A-Z2-7]{12} and KV-CANARY-[A-Z2-7]{12}\. A: [\d,]+ tokens of prompt, [\d,]+ of filler between the markers, \d+ pages of 16 tokens\.$/
        );
        expect(await canary.locator('[data-probe-id="kv-pages"] .canary-numbers').textContent()).toMatch(
            /numRowMatches 0 · numChecksumMatches 0/
        );
        expect(await run.isEnabled()).toBe(true);

        await canary.scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("isolation-canary"));
        expect(app().problems).toEqual([]);
    });

    it("replays a finished greedy turn alone in a fresh context: identical, token for token", async () => {
        const { page } = app();
        await configureWorkspace(page, { temperature: 0, maxTokens: 12 });
        await sendMessage(page, "Tell me about pages");
        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), {
                timeout: 120_000,
                interval: 250
            })
            .toEqual(["user", "assistant"]);
        const workspace = (await readApp(page)).items[0]!;
        await openView(page, "Isolation");

        const turn = page.locator("[data-request-id]");
        await expect.poll(() => turn.count(), { timeout: 15_000 }).toBe(1);
        const requestId = (await turn.getAttribute("data-request-id"))!;
        expect(requestId).toMatch(/^turn-[0-9a-f]{32}$/);
        expect(await turn.locator(".isolation-item-title").textContent()).toMatch(
            new RegExp(`^${workspace.name} · turn-[0-9a-f]{8}… · \\d+ tokens?$`)
        );

        await page.getByRole("button", { name: `Replay ${requestId.slice(0, 13)}… of ${workspace.name}` }).click();
        await expect.poll(() => turn.getAttribute("data-replay-state"), { timeout: 60_000, interval: 200 }).toBe("identical");
        expect(await turn.getByRole("status").textContent()).toMatch(/^Identical over \d+ tokens? \([\d.]+ m?s\)$/);

        await page.locator(".isolation-panel").scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("isolation-drill"));
        expect(app().problems).toEqual([]);
    });
});
