import { expect } from "vitest";
import type { Locator, Page } from "playwright-core";
import type { LoadedWorkspaces, StoredWorkspace } from "../../../contract/workspaces.js";

/** What the sidebar shows of each workspace (WorkspaceList's data attributes). */
export interface WorkspaceItem {
    readonly id: string;
    readonly name: string;
    readonly phase: "idle" | "sending" | "queued" | "running" | "stopping";
    readonly streamedChars: number;
    readonly numMessages: number;
    /** The swatch's colour. */
    readonly colour: string;
}

/** A row of the page map's owner table (PageOwnerTable's data attributes). */
export interface PageOwnerRow {
    readonly owner: string;
    readonly name: string;
    readonly colour: string;
    readonly numPages: number;
}

/** A decode sequence (RoleOccupancy's data attributes). */
export interface SequenceSlot {
    readonly sequence: number;
    readonly workspace: string;
    readonly running: boolean;
}

/** Reads the sidebar, the page map's table and the decode sequences in one round trip. */
export function readApp(
    page: Page
): Promise<{ items: WorkspaceItem[]; owners: PageOwnerRow[]; slots: SequenceSlot[]; free: number; numPages: number }> {
    return page.evaluate(`(() => {
        const data = (element, name) => element.getAttribute("data-" + name) ?? "";
        const table = document.querySelector(".page-owner-table");
        return {
            items: [...document.querySelectorAll(".workspace-item")].map((element) => ({
                id: data(element, "workspace-id"), name: element.querySelector(".workspace-item-name")?.textContent ?? "",
                phase: data(element, "turn-phase"), streamedChars: Number(data(element, "streamed-chars")),
                numMessages: Number(data(element, "num-messages")), colour: element.querySelector("rect")?.getAttribute("fill") ?? ""
            })),
            owners: [...document.querySelectorAll(".page-owner-table tbody tr")].filter((row) => data(row, "owner") !== "free").map((row) => ({
                owner: data(row, "owner"), name: data(row, "owner-name"), colour: data(row, "colour"), numPages: Number(data(row, "num-pages"))
            })),
            slots: [...document.querySelectorAll(".sequence-slot")].map((element) => ({
                sequence: Number(data(element, "sequence")), workspace: data(element, "workspace"), running: data(element, "running") === "true"
            })),
            free: Number(table?.getAttribute("data-free") ?? "-1"),
            numPages: Number(table?.getAttribute("data-num-pages") ?? "-1")
        };
    })()`);
}

export async function workspaceByName(page: Page, name: string): Promise<WorkspaceItem> {
    const item = (await readApp(page)).items.find((candidate) => candidate.name === name);
    if (item === undefined) {
        throw new Error(`No workspace named ${name} in the sidebar.`);
    }
    return item;
}

/** Clicks New and returns the workspace it made (the selected one). */
export async function newWorkspace(page: Page): Promise<WorkspaceItem> {
    const before = (await readApp(page)).items.length;
    await page.getByRole("button", { name: "New workspace" }).click();
    await page.waitForFunction(`document.querySelectorAll(".workspace-item").length === ${before + 1}`);
    const items = (await readApp(page)).items;
    return items[items.length - 1]!;
}

export async function selectWorkspace(page: Page, name: string): Promise<void> {
    await showChats(page); // the workspace list is the Chats view's
    await page.locator(".workspace-item", { hasText: name }).click();
    await page.locator(`.chat-view[aria-label="Workspace ${name}"]`).waitFor();
}

/** Sets the selected workspace's temperature and max tokens through its Settings. */
export async function configureWorkspace(page: Page, settings: { temperature?: number; maxTokens?: number }): Promise<void> {
    await showChats(page);
    const details = page.locator(".workspace-settings");
    if ((await details.getAttribute("open")) === null) {
        await details.locator("summary").click();
    }
    if (settings.temperature !== undefined) {
        await page.getByLabel("Temperature", { exact: true }).fill(String(settings.temperature));
    }
    if (settings.maxTokens !== undefined) {
        await page.getByLabel("Max tokens", { exact: true }).fill(String(settings.maxTokens));
    }
    await details.locator("summary").click();
}

/** Types into the message box and presses Enter. */
export async function sendMessage(page: Page, text: string): Promise<void> {
    await showChats(page);
    const box = page.getByLabel("Message", { exact: true });
    await box.fill(text);
    await box.press("Enter");
}

/** The saved workspaces, as the server keeps them: its loadWorkspaces, asked over a second RPC connection from the page (its session cookie and RPC token). */
export async function storedWorkspaces(page: Page): Promise<readonly StoredWorkspace[]> {
    return (await storedState(page)).workspaces;
}

/** The server's whole loadWorkspaces answer: workspaces, selection and the problems it set aside at start. */
export function storedState(page: Page): Promise<LoadedWorkspaces> {
    return page.evaluate<LoadedWorkspaces>(`new Promise((resolve, reject) => {
        const socket = new WebSocket((location.protocol === "https:" ? "wss:" : "ws:") + "//" + location.host + "/rpc?session_token=" + localStorage.getItem("kvault.sessionToken"));
        const timer = setTimeout(() => { socket.close(); reject(new Error("loadWorkspaces got no answer in 10 s")); }, 10000);
        socket.onopen = () => socket.send(JSON.stringify({ id: 1, method: "loadWorkspaces", params: {} }));
        socket.onmessage = (event) => {
            const answer = JSON.parse(event.data);
            if (answer.id !== 1) return;
            clearTimeout(timer);
            socket.close();
            answer.error ? reject(new Error(answer.error.message)) : resolve(answer.result);
        };
        socket.onerror = () => { clearTimeout(timer); reject(new Error("the RPC connection failed")); };
    })`);
}

/** Waits until the sidebar shows the workspaces the server keeps (after a page load or reload). */
export async function waitForWorkspaces(page: Page): Promise<void> {
    await page.locator('.workspace-list[data-load="ready"]').waitFor({ timeout: 30_000 });
}

/** Pixels of the page map's canvas that are exactly `hex` (a sealed page is drawn in its owner's colour). */
export function canvasPixelsOfColour(page: Page, hex: string): Promise<number> {
    return page.evaluate<number>(`(() => {
        const canvas = document.querySelector(".page-map-canvas");
        if (canvas === null) return 0;
        const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
        const [r, g, b] = [1, 3, 5].map((index) => parseInt(${JSON.stringify(hex)}.slice(index, index + 2), 16));
        let count = 0;
        for (let index = 0; index < data.length; index += 4)
            if (data[index] === r && data[index + 1] === g && data[index + 2] === b && data[index + 3] === 255) count++;
        return count;
    })()`);
}

/** Waits `ms`. */
export function pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The rail's views (renderer/shell/appViews.ts), by their labels. */
export type ViewName = "Chats" | "Models" | "Memory" | "Isolation" | "Server" | "Settings";

/** Shows the Chats view if another view is on screen (a test that watches a panel while it chats). */
export async function showChats(page: Page): Promise<void> {
    if (await page.locator("#view-chats").isHidden()) {
        await openView(page, "Chats");
    }
}

/** Shows the Server view (the local API, its keys, the remote backends, the request log) and waits for its settings. */
export async function openServerPanel(page: Page): Promise<void> {
    await openView(page, "Server");
    await page.locator("#view-server .settings-panel").waitFor({ timeout: 30_000 });
}

/** Shows a view by clicking its tab on the rail, and waits until its panel is on screen. */
export async function openView(page: Page, name: ViewName): Promise<void> {
    await page.getByRole("tab", { name, exact: true }).click();
    await page.getByRole("tabpanel", { name, exact: true }).waitFor({ state: "visible" });
}

/** Opens the settings panel and waits for it. */
export async function openSettingsPanel(page: Page): Promise<void> {
    await openView(page, "Settings");
    await page.locator("#view-settings .settings-panel").waitFor({ timeout: 30_000 });
}

/** Waits until the settings panel's engine settings reach `state` ("planned", "applied"). */
async function engineSettingsReach(page: Page, state: string, timeoutMs: number): Promise<void> {
    const engine = page.locator(".settings-panel [data-engine-settings]");
    await expect.poll(() => engine.getAttribute("data-engine-settings"), { timeout: timeoutMs }).toBe(state);
}

/** Asks the settings panel for the memory its engine settings take, and returns the plan once it is shown. */
export async function planEngineSettings(page: Page): Promise<Locator> {
    await page.getByRole("button", { name: "Show the memory it takes" }).click();
    await engineSettingsReach(page, "planned", 60_000);
    return page.locator(".settings-panel .settings-plan");
}

/** Applies the planned engine settings and waits until the engine has restarted with them. */
export async function applyEngineSettings(page: Page): Promise<void> {
    await page.getByRole("button", { name: "Apply and restart the engine" }).click();
    await engineSettingsReach(page, "applied", 120_000);
}

export async function openModelPanel(page: Page): Promise<void> {
    await openView(page, "Models");
    await page.locator('[data-fact="model-name"]').waitFor({ timeout: 30_000 });
}
