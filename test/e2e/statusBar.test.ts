// The status bar's live resource use, in a real browser against the headless server: every figure
// is the engine's (held against the RPC's answers and the engine process's /proc), never the page's.
import fs from "node:fs";
import type { Locator } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { EngineSnapshot } from "../../contract/EngineSnapshot.js";
import type { ResourceUse } from "../../contract/resourceUse.js";
import { configureWorkspace, readApp, sendMessage } from "./support/appDriver.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

/** The engine process's resident set, from the kernel: VmRSS in /proc/<pid>/status, bytes. */
function kernelRssBytes(pid: number): number {
    const line = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    if (line === null) {
        throw new Error(`/proc/${pid}/status has no VmRSS line.`);
    }
    return Number(line[1]) * 1024;
}

/** An answer that runs for several of the page's resourceUse polls, inside the 2,048-token window with the prompt. */
const LONG_ANSWER_TOKENS = 1_900;

const numberAttribute = async (locator: Locator, name: string): Promise<number> => Number(await locator.getAttribute(name));

describe("the status bar, in a real browser", () => {
    /** Every resourceUse answer the page received over its own RPC socket. */
    const received: ResourceUse[] = [];
    const kvault = useKvaultApp({
        seed: [{ id: "ui-notes", name: "Notes", colour: 0, messages: [] }],
        // A window for an answer long enough that the page's resourceUse poll (twice a second) lands while it runs: a
        // short answer of the tiny model can end between two polls on a fast machine, and its rate is never seen live.
        serveArgs: ["--context", "2048"],
        viewport: { width: 1280, height: 820 },
        prepare: async (app) => {
            app.page.on("websocket", (socket) =>
                socket.on("framereceived", ({ payload }) => {
                    const answer = JSON.parse(String(payload)) as { result?: Partial<ResourceUse> };
                    if (answer.result?.kv !== undefined && answer.result.process !== undefined) {
                        received.push(answer.result as ResourceUse);
                    }
                })
            );
            // The page's RPC socket opened before the listener: a reload opens the one it listens to.
            await app.page.reload();
            await app.page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        }
    });
    const { screenshots } = kvault;

    it("shows the engine process's RAM and the KV bytes of each role as the engine reports them", async () => {
        const { page } = kvault.app();
        const ram = page.locator('[data-status="ram"]');
        await ram.waitFor({ timeout: 30_000 });
        const enginePid = kvault.server().enginePid();
        expect(enginePid).toBeDefined();
        expect(await numberAttribute(ram, "data-pid"), "RAM is the engine process's, not the server's").toBe(enginePid);
        const shownRss = await numberAttribute(ram, "data-rss-bytes");
        const kernelRss = kernelRssBytes(enginePid!);
        expect(shownRss).toBeGreaterThan(kernelRss * 0.75);
        expect(shownRss).toBeLessThan(kernelRss * 1.25);
        expect(await ram.textContent()).toMatch(/^RAM [\d.]+ MiB/);

        // Idle, the KV figures are still: the bar's equal the engine's, and the engine's follow from its snapshot.
        const [use, snapshot] = [await rpcFromPage<ResourceUse>(page, "resourceUse"), await rpcFromPage<EngineSnapshot>(page, "snapshot")];
        const byRole = Object.fromEntries(use.kv.map((role) => [role.role, role]));
        expect(Object.keys(byRole)).toEqual(["prefill", "decode", "pool"]);
        for (const role of ["prefill", "decode"] as const) {
            const capacity = snapshot.sequences
                .filter((sequence) => sequence.role === role)
                .reduce((sum, sequence) => sum + sequence.capacity, 0);
            expect(byRole[role]!.reservedBytes).toBe(capacity * snapshot.bytesPerToken);
        }
        expect(byRole.pool!.reservedBytes).toBe(snapshot.pageMap.numPages * snapshot.pageMap.pageBytes);
        const kv = page.locator('[data-status="kv"]');
        await expect.poll(() => numberAttribute(kv, "data-used-bytes")).toBe(use.kv.reduce((sum, role) => sum + role.usedBytes, 0));
        expect(await numberAttribute(kv, "data-reserved-bytes")).toBe(use.kv.reduce((sum, role) => sum + role.reservedBytes, 0));
        for (const role of use.kv) {
            const line = kv.locator(`[data-role="${role.role}"]`);
            expect(await numberAttribute(line, "data-reserved-bytes")).toBe(role.reservedBytes);
        }
    });

    it("shows a workspace's tokens per second while it answers, as the engine counted them, and the full numbers on focus", async () => {
        const { page } = kvault.app();
        await configureWorkspace(page, { maxTokens: LONG_ANSWER_TOKENS });
        await sendMessage(page, "Tell me a long story about pages.");
        const rate = page.locator('.status-rate[data-workspace="ui-notes"]');
        // Seen while the sidebar says the turn runs: the rate is live, not a summary after the answer.
        await expect
            .poll(
                async () => {
                    const phase = (await readApp(page)).items.find((item) => item.id === "ui-notes")?.phase;
                    return phase === "running" && (await rate.count()) > 0;
                },
                { timeout: 120_000, interval: 100 }
            )
            .toBe(true);
        const shownRate = await numberAttribute(rate, "data-tokens-per-second");
        expect(shownRate).toBeGreaterThan(0);
        expect(
            received.some((use) => use.workspaces.some((entry) => entry.workspace === "ui-notes" && entry.tokensPerSecond === shownRate)),
            "the rate shown is one the engine sent"
        ).toBe(true);
        expect(await rate.textContent()).toMatch(/Notes [\d.]+ tok\/s/);

        const use = await rpcFromPage<ResourceUse>(page, "resourceUse");
        expect(
            use.workspaces.find((entry) => entry.workspace === "ui-notes")?.tokensPerSecond ?? 0,
            "the engine counts it too"
        ).toBeGreaterThan(0);
        await page.locator('[data-status="kv"]').focus();
        const detail = page.locator('[data-status="kv"] [role="tooltip"]');
        expect(await detail.isVisible()).toBe(true);
        expect(await detail.textContent()).toMatch(/Decode context: [\d,]+ bytes/);
        screenshots.push(await kvault.app().screenshot("status-bar"));
    });

    it("stays on one line of the page at 390 px, the total rate in the bar and the rest in the tooltip", async () => {
        const { page } = kvault.app();
        await page.setViewportSize({ width: 390, height: 800 });
        await page.locator('[data-status="ram"]').waitFor();
        expect(await page.evaluate("document.scrollingElement.scrollWidth - innerWidth")).toBe(0);
        expect(
            await page
                .locator(".status-rate")
                .first()
                .isVisible()
                .catch(() => false)
        ).toBe(false);
        await page.setViewportSize({ width: 1280, height: 820 });
    });
});
