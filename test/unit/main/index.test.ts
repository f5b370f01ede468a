// The thin electron files (main/index.ts, registerIpcHandlers, utilityProcessSpawner) wired
// together, with electron replaced by fakes: no Electron binary, no window, no native engine.
// The engine process is a fake utilityProcess that answers like one.
import { EventEmitter } from "node:events";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ipcChannels } from "../../../contract/channels.js";
import type { EngineCommand } from "../../../contract/engineProtocol.js";
import type { BridgeResult } from "../../../contract/KvaultBridge.js";
import type { AppSettingsView } from "../../../contract/settings.js";
import { defaultWorkspaceSettings } from "../../../contract/workspaces.js";
import { freePort } from "./loopbackPorts.js";

type Handler = (event: unknown, ...args: unknown[]) => unknown;

const fake = vi.hoisted(() => {
    let resolveReady!: () => void;
    return {
        userData: "",
        ready: new Promise<void>((resolve) => {
            resolveReady = resolve;
        }),
        resolveReady: () => resolveReady(),
        handlers: new Map<string, Handler>(),
        appListeners: new Map<string, ((...args: unknown[]) => void)[]>(),
        forks: [] as { modulePath: string; options: { serviceName: string; env: Record<string, string> }; child: unknown }[],
        numQuits: 0,
        menus: [] as unknown[][],
        themeSource: "system",
        messageBoxes: [] as { message?: string; detail?: string }[],
        messageBoxAnswer: 0,
        opened: [] as string[],
        /** What the native Open dialog answers, and the options it was shown with. */
        openDialogAnswer: { canceled: true, filePaths: [] as string[] },
        openDialogs: [] as { title?: string; properties?: string[] }[],
        windows: [] as {
            calls: string[];
            sent: unknown[][];
            bounds: { x: number; y: number; width: number; height: number };
            openHandler?: (details: { url: string }) => { action: string };
            emit(event: string): boolean;
        }[]
    };
});

vi.mock("electron", async () => {
    const { EventEmitter: Emitter } = await import("node:events");
    const { PassThrough: Pipe } = await import("node:stream");

    class FakeEngineChild extends Emitter {
        pid = 7000 + fake.forks.length;
        stdout = new Pipe();
        stderr = new Pipe();
        readonly posted: EngineCommand[] = [];
        postMessage(command: EngineCommand): void {
            this.posted.push(command);
            const reply = (message: unknown): void => void setTimeout(() => this.emit("message", message), 1);
            if (command.type === "chat") {
                const { requestId } = command.request;
                reply({ type: "queued", requestId, position: 0 });
                reply({ type: "started", requestId });
                reply({ type: "text", requestId, text: "Hel" });
                if (command.request.workspace !== "slow") {
                    reply({ type: "text", requestId, text: "lo" });
                    reply({
                        type: "finished",
                        requestId,
                        text: "Hello",
                        finishReason: "stop",
                        usage: { promptTokens: 3, cachedPromptTokens: 0, evaluatedPromptTokens: 3, completionTokens: 2 }
                    });
                }
            } else if (command.type === "call" && command.method === "memoryEvents") {
                // the memory record's poll (host/memoryRecord/): this engine recorded no memory event
                reply({ type: "answer", callId: command.callId, result: { events: [], oldestSeq: 0, lastSeq: 0 } });
            } else if (command.type === "call" && command.method === "ping") {
                // the supervisor's liveness ping: unanswered, a slow run of this file would see the engine killed and forked again
                reply({ type: "answer", callId: command.callId, result: {} });
            } else if (command.type === "cancel") {
                reply({
                    type: "failed",
                    requestId: command.requestId,
                    error: { code: "request_cancelled", message: "The request was cancelled." }
                });
            } else if (command.type === "shutdown") {
                setTimeout(() => {
                    this.emit("exit", 0);
                    this.stdout.end();
                    this.stderr.end();
                }, 1);
            }
        }
        kill(): boolean {
            return true;
        }
    }

    class FakeBrowserWindow extends Emitter {
        static all: FakeBrowserWindow[] = [];
        readonly calls: string[] = [];
        readonly sent: unknown[][] = [];
        openHandler: ((details: { url: string }) => { action: string }) | undefined;
        readonly webContents = Object.assign(new Emitter(), {
            setWindowOpenHandler: (handler: (details: { url: string }) => { action: string }) => {
                this.openHandler = handler;
            },
            send: (...args: unknown[]) => void this.sent.push(args)
        });
        bounds = { x: 10, y: 20, width: 1000, height: 700 };
        constructor(readonly options: { x?: number; width?: number }) {
            super();
            FakeBrowserWindow.all.push(this);
            fake.windows.push(this);
        }
        isDestroyed = (): boolean => false;
        isMinimized = (): boolean => true;
        isVisible = (): boolean => true;
        isMaximized = (): boolean => false;
        isFullScreen = (): boolean => false;
        getNormalBounds = () => this.bounds;
        restore = (): void => void this.calls.push("restore");
        focus = (): void => void this.calls.push("focus");
        maximize = (): void => void this.calls.push("maximize");
        setFullScreen = (): void => void this.calls.push("setFullScreen");
        setProgressBar = (): void => undefined;
        static getAllWindows(): FakeBrowserWindow[] {
            return FakeBrowserWindow.all;
        }
        loadURL(): Promise<void> {
            return Promise.resolve();
        }
        show(): void {}
    }

    const workArea = { x: 0, y: 0, width: 1920, height: 1050 };
    return {
        app: {
            isPackaged: false,
            isReady: () => true,
            enableSandbox: () => undefined,
            requestSingleInstanceLock: () => true,
            on: (event: string, listener: (...args: unknown[]) => void) => {
                fake.appListeners.set(event, [...(fake.appListeners.get(event) ?? []), listener]);
            },
            whenReady: () => fake.ready,
            getPath: () => fake.userData,
            getVersion: () => "0.1.0",
            quit: () => void fake.numQuits++,
            exit: () => undefined
        },
        BrowserWindow: FakeBrowserWindow,
        Menu: {
            buildFromTemplate: (template: unknown[]) => template,
            setApplicationMenu: (menu: unknown[]) => void fake.menus.push(menu)
        },
        // Accessors, as Electron's: setting themeSource changes what shouldUseDarkColors says.
        nativeTheme: Object.defineProperties(new Emitter(), {
            themeSource: {
                get: () => fake.themeSource,
                set: (value: string) => {
                    fake.themeSource = value;
                }
            },
            shouldUseDarkColors: { get: () => fake.themeSource === "dark" }
        }),
        dialog: {
            showMessageBox: async (...args: unknown[]) => {
                fake.messageBoxes.push(args.at(-1) as { message?: string });
                return { response: fake.messageBoxAnswer };
            },
            showOpenDialog: async (...args: unknown[]) => {
                fake.openDialogs.push(args.at(-1) as { title?: string; properties?: string[] });
                return fake.openDialogAnswer;
            }
        },
        shell: { openExternal: async (url: string) => void fake.opened.push(url) },
        // The OS keychain, as a reversible wrapping: the key for workspaces' KV on disk (main/settings/diskKvKeychain.ts).
        safeStorage: {
            isEncryptionAvailable: () => true,
            encryptString: (text: string) => Buffer.from(`keychain:${text}`),
            decryptString: (sealed: Buffer) => sealed.toString().slice("keychain:".length)
        },
        screen: { getAllDisplays: () => [{ workArea }], getPrimaryDisplay: () => ({ workArea }) },
        session: {
            defaultSession: {
                setPermissionRequestHandler: () => undefined,
                setPermissionCheckHandler: () => undefined,
                setDevicePermissionHandler: () => undefined,
                webRequest: { onHeadersReceived: () => undefined }
            }
        },
        ipcMain: { handle: (channel: string, handler: Handler) => fake.handlers.set(channel, handler) },
        utilityProcess: {
            fork: (modulePath: string, _args: string[], options: { serviceName: string; env: Record<string, string> }) => {
                const child = new FakeEngineChild();
                fake.forks.push({ modulePath, options, child });
                if (options.serviceName === "Kvault model inspection") {
                    // The model inspection process (host/models/serveInspection.ts): "ready", then its one answer. This one
                    // reads no file and refuses as the real one refuses an unreadable file, at once; silent, every listing
                    // of a local model would wait out the inspection's 20 s deadline for the same refusal.
                    const { path: modelPath } = JSON.parse(options.env.KVAULT_INSPECT_REQUEST ?? "{}") as { path?: string };
                    setTimeout(() => child.emit("message", { type: "ready" }), 1);
                    setTimeout(
                        () =>
                            child.emit("message", {
                                type: "refused",
                                code: "model_unreadable",
                                message: `This test's inspection process reads no file (${modelPath}).`
                            }),
                        2
                    );
                    return child;
                }
                // The engine reports the model it loaded, as the real one does: the path it was configured with.
                const { modelPath } = JSON.parse(options.env.KVAULT_ENGINE_CONFIG ?? "{}") as { modelPath?: string };
                setTimeout(
                    () =>
                        child.emit("message", {
                            type: "ready",
                            info: {
                                modelName: "tiny",
                                modelPath,
                                mode: { effective: "split" },
                                window: { limit: 512 },
                                compute: {
                                    backend: "cpu",
                                    binary: "local build",
                                    devices: [],
                                    layers: { numOnDevice: 0, numTotal: 3, numPlanned: 0 }
                                }
                            }
                        }),
                    1
                );
                return child;
            }
        }
    };
});

const appUrl = new URL("../../../renderer/index.html", import.meta.url).href;

/** A renderer as ipcMain sees it: its top frame's URL, and its webContents. */
function renderer(id: number, url = appUrl): { event: unknown; sent: unknown[][]; contents: EventEmitter } {
    const sent: unknown[][] = [];
    const contents = Object.assign(new EventEmitter(), { id, isDestroyed: () => false, send: (...args: unknown[]) => sent.push(args) });
    return { event: { senderFrame: { url, parent: null }, sender: contents }, sent, contents };
}

function call(channel: string, event: unknown, ...args: unknown[]): Promise<unknown> {
    const handler = fake.handlers.get(channel);
    if (handler === undefined) {
        throw new Error(`no handler for ${channel}`);
    }
    return Promise.resolve().then(() => handler(event, ...args));
}

const turn = (requestId: string, workspace = "alice"): unknown => ({
    requestId,
    workspace,
    messages: [{ role: "user", content: "Hi" }],
    sampling: { temperature: 0, maxTokens: 4 }
});

afterAll(() => {
    fs.rmSync(fake.userData, { recursive: true, force: true });
    // The unit project runs its files one after another in a worker (isolate: false): the next file imports the real
    // electron, and main's modules evaluated afresh, not the ones wired to these fakes.
    vi.doUnmock("electron");
    vi.resetModules();
});

/**
 * Each test here runs the app's whole host (the first imports main/index.ts and all it is made of;
 * others start HTTP servers): seconds on a busy 2-core machine, beyond the unit project's 5 s.
 */
const WIRED_HOST_TIMEOUT_MS = 60_000;

describe("the Electron host, wired (electron faked)", { timeout: WIRED_HOST_TIMEOUT_MS }, () => {
    it("on ready: settings written, demo model generated, engine forked as a utilityProcess, every channel handled", async () => {
        fake.userData = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-userdata-"));
        await import("../../../main/index.js");
        fake.resolveReady();
        await vi.waitFor(() => expect([...fake.handlers.keys()].sort()).toEqual([ipcChannels.getAppInfo, ipcChannels.call].sort()));

        expect(fs.existsSync(path.join(fake.userData, "settings.json"))).toBe(true);
        expect(fs.readdirSync(path.join(fake.userData, "models"))).toEqual(["tiny-v1.gguf"]);
        expect(fake.forks).toHaveLength(1);
        const [fork] = fake.forks;
        expect(path.basename(fork!.modulePath)).toBe("engineProcess.js");
        expect(fork!.options.serviceName).toBe("Kvault engine");
        expect(JSON.parse(fork!.options.env.KVAULT_ENGINE_CONFIG!)).toMatchObject({
            modelPath: path.join(fake.userData, "models", "tiny-v1.gguf"),
            mode: "split"
        });
        expect(fake.handlers.has(ipcChannels.turnEvent)).toBe(false); // main → renderer only
    });

    it("answers the app's own page, and refuses anyone else", async () => {
        const app = renderer(1);
        expect(await call(ipcChannels.call, app.event, "info", {})).toMatchObject({ ok: true, value: { modelName: "tiny" } });
        expect(await call(ipcChannels.getAppInfo, app.event)).toEqual({ version: "0.1.0", platform: process.platform });
        await expect(call(ipcChannels.call, renderer(2, "https://example.com/").event, "info", {})).rejects.toMatchObject({
            code: "untrusted_sender"
        });
        await expect(call(ipcChannels.call, app.event, "info")).rejects.toMatchObject({ code: "invalid_request" });
        expect(await call(ipcChannels.call, app.event, "forgetWorkspace", { workspace: 1 })).toMatchObject({
            ok: false,
            error: { code: "invalid_request" }
        });
    });

    it("keeps local models beside its engine, as the headless server does, with their settings", async () => {
        const app = renderer(1);
        // before: several was false, and a workspace's localModel was refused ("this host cannot load (it runs one model)")
        expect(await call(ipcChannels.call, app.event, "listLocalModels", {})).toMatchObject({
            ok: true,
            value: { several: true, models: expect.arrayContaining([{ id: "tiny", source: "own", loaded: true }]) }
        });
        expect(await call(ipcChannels.call, app.event, "getModelPoolSettings", {})).toMatchObject({
            ok: true,
            value: { saved: { modelIdleSeconds: 300, modelsMemoryMb: null, modelsFolders: [] }, fromCommandLine: {} }
        });
        expect(await call(ipcChannels.call, app.event, "setModelPoolSettings", { modelIdleSeconds: 90 })).toMatchObject({
            ok: true,
            value: { running: { modelIdleSeconds: 90 } }
        });
        expect(JSON.parse(fs.readFileSync(path.join(fake.userData, "settings.json"), "utf8")).modelPool.modelIdleSeconds).toBe(90);

        // a folder the settings name: its GGUF files are listed by the app's local API too, as the headless server lists them
        const folder = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-app-models-"));
        fs.writeFileSync(path.join(folder, "found-here.gguf"), "GGUF");
        expect(await call(ipcChannels.call, app.event, "setModelPoolSettings", { modelsFolders: [folder] })).toMatchObject({ ok: true });
        const port = await freePort();
        const on = (await call(ipcChannels.call, app.event, "setLocalApi", { enabled: true, port })) as BridgeResult<AppSettingsView>;
        const { apiKey } = (on as { value: AppSettingsView }).value.localApi;
        const listed = (await (
            await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })
        ).json()) as {
            data: { id: string; kvault?: { loaded?: boolean } }[];
        };
        expect(listed.data.find((model) => model.id === "found-here")).toMatchObject({ kvault: { loaded: false } });
        await call(ipcChannels.call, app.event, "setLocalApi", { enabled: false, port });
        await call(ipcChannels.call, app.event, "setModelPoolSettings", { modelsFolders: [] });
        fs.rmSync(folder, { recursive: true, force: true });
    });

    it("streams a chat's events to the window that asked, and only there", async () => {
        const alice = renderer(1);
        const bob = renderer(2);
        const answer = await call(ipcChannels.call, alice.event, "chat", turn("r1"));
        expect(answer).toEqual({ ok: true, value: { text: "Hello", finishReason: "stop", usage: expect.any(Object) } });
        expect(alice.sent).toEqual([
            [ipcChannels.turnEvent, { type: "queued", requestId: "r1", position: 0 }],
            [ipcChannels.turnEvent, { type: "started", requestId: "r1" }],
            [ipcChannels.turnEvent, { type: "text", requestId: "r1", text: "Hel" }],
            [ipcChannels.turnEvent, { type: "text", requestId: "r1", text: "lo" }]
        ]);
        expect(bob.sent).toEqual([]);
    });

    it("cancels a window's turns when it closes", async () => {
        const window = renderer(3);
        const answer = call(ipcChannels.call, window.event, "chat", turn("slow-1", "slow"));
        await vi.waitFor(() => expect(window.sent).toHaveLength(3));
        window.contents.emit("destroyed");
        expect(await answer).toMatchObject({ ok: false, error: { code: "request_cancelled" } });
        const child = fake.forks[0]!.child as { posted: EngineCommand[] };
        expect(child.posted).toContainEqual({ type: "cancel", requestId: "slow-1" });
    });

    it("switches the local API on and off from the settings", async () => {
        const app = renderer(1);
        const port = await freePort();
        const on = (await call(ipcChannels.call, app.event, "setLocalApi", { enabled: true, port })) as BridgeResult<AppSettingsView>;
        expect(on).toMatchObject({ ok: true, value: { localApi: { enabled: true, port, url: `http://127.0.0.1:${port}` } } });
        const { apiKey } = (on as { value: AppSettingsView }).value.localApi;
        const models = await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect(await models.json()).toMatchObject({ data: [{ id: "tiny" }] });

        expect(await call(ipcChannels.call, app.event, "setLocalApi", { enabled: false, port })).toMatchObject({
            ok: true,
            value: { localApi: { enabled: false, url: null } }
        });
        expect(await call(ipcChannels.call, app.event, "getSettings", {})).toMatchObject({
            ok: true,
            value: { localApi: { enabled: false, port }, modelPath: null }
        });
        expect(await call(ipcChannels.call, app.event, "setLocalApi", { enabled: true, port: 80 })).toMatchObject({
            ok: false,
            error: { code: "invalid_request" }
        });
    });

    it("runs a workspace's turns on a backend added in the settings, at once, and says so once it is removed", async () => {
        // An OpenAI-compatible server on loopback: its model list, and a streamed answer.
        let authorization: string | undefined;
        const server = http.createServer((request, response) => {
            authorization = request.headers.authorization;
            request.resume();
            request.on("end", () => {
                if (request.url === "/v1/models") {
                    response.writeHead(200, { "content-type": "application/json" });
                    response.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model" }] }));
                    return;
                }
                const chunk = (content: string, finish: string | null): string =>
                    `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
                response.writeHead(200, { "content-type": "text/event-stream" });
                response.end(`${chunk("From ", null)}${chunk("afar", "stop")}data: [DONE]\n\n`);
            });
        });
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        try {
            const app = renderer(1);
            const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
            expect(
                await call(ipcChannels.call, app.event, "setBackend", { name: "ls", url, key: "sk-desktop-1", allowRemote: false })
            ).toMatchObject({
                ok: true,
                value: { backends: { source: "settings", list: [{ name: "ls", apiBase: `${url}/v1`, hasKey: true }] } }
            });
            expect(await call(ipcChannels.call, app.event, "listBackends", {})).toMatchObject({
                ok: true,
                value: { backends: [{ name: "ls", models: [{ id: "m" }] }] }
            });
            const workspace = {
                id: "ui-remote",
                name: "Remote",
                colour: 0,
                settings: defaultWorkspaceSettings,
                backend: { name: "ls", model: "m" }
            };
            await call(ipcChannels.call, app.event, "saveWorkspace", { workspace });
            await call(ipcChannels.call, app.event, "appendMessage", {
                workspace: workspace.id,
                message: { id: "q-1", role: "user", content: "Hi" }
            });
            const chat = (requestId: string, answerId: string): Promise<unknown> =>
                call(ipcChannels.call, app.event, "chat", { ...(turn(requestId, workspace.id) as object), answerId });
            expect(await chat("remote-1", "a-1")).toMatchObject({ ok: true, value: { text: "From afar", finishReason: "stop" } });
            expect(authorization).toBe("Bearer sk-desktop-1");
            const saved = JSON.parse(fs.readFileSync(path.join(fake.userData, "settings.json"), "utf8")) as { backends: unknown[] };
            expect(saved.backends).toEqual([{ name: "ls", url, key: "sk-desktop-1", allowRemote: false }]);

            expect(await call(ipcChannels.call, app.event, "removeBackend", { name: "ls" })).toMatchObject({
                ok: true,
                value: { backends: { list: [] } }
            });
            expect(await chat("remote-2", "a-2")).toMatchObject({
                ok: false,
                error: { code: "backend_not_found", message: expect.stringContaining("it was removed in the settings") }
            });
        } finally {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        }
    });

    it("answers chooseModelFile with the file chosen in the native dialog, or canceled", async () => {
        const app = renderer(1);
        fake.openDialogAnswer = { canceled: false, filePaths: ["/models/qwen.gguf"] };
        expect(await call(ipcChannels.call, app.event, "chooseModelFile", {})).toEqual({
            ok: true,
            value: { kind: "chosen", path: "/models/qwen.gguf" }
        });
        expect(fake.openDialogs.at(-1)).toMatchObject({ title: "Open a GGUF model", properties: ["openFile"] });
        fake.openDialogAnswer = { canceled: true, filePaths: [] };
        expect(await call(ipcChannels.call, app.event, "chooseModelFile", {})).toEqual({ ok: true, value: { kind: "canceled" } });
        expect(await call(ipcChannels.call, app.event, "chooseModelFile", { path: "/etc" })).toMatchObject({
            ok: false,
            error: { code: "invalid_request" }
        });
        expect(fake.openDialogs).toHaveLength(2);
    });

    it("installs the standard menu; its shortcuts reach the window as app commands", () => {
        const menu = fake.menus.at(-1) as { label?: string; role?: string; submenu?: { label?: string; click?: () => void }[] }[];
        expect(menu.map((entry) => entry.label ?? entry.role)).toEqual(["&File", "&Edit", "&View", "W&orkspace", "windowMenu", "help"]);
        const item = (menuLabel: string, label: string) =>
            menu.find((entry) => entry.label === menuLabel)!.submenu!.find((entry) => entry.label === label)!;
        item("&File", "New Workspace").click!();
        item("W&orkspace", "Workspace 3").click!();
        const [window] = fake.windows;
        expect(window!.sent).toEqual([
            ["kvault:app:command", { command: "newWorkspace" }],
            ["kvault:app:command", { command: "selectWorkspace", position: 3 }]
        ]);
    });

    it("toggles dark mode from the menu and keeps the choice in the settings", async () => {
        const menu = fake.menus.at(-1) as { label?: string; submenu?: { label?: string; click?: () => void }[] }[];
        menu.find((entry) => entry.label === "&View")!.submenu!.find((entry) => entry.label === "Dark Mode")!.click!();
        expect(fake.themeSource).toBe("dark");
        await vi.waitFor(() =>
            expect(JSON.parse(fs.readFileSync(path.join(fake.userData, "settings.json"), "utf8"))).toMatchObject({ theme: "dark" })
        );
        expect(
            (fake.menus.at(-1) as { label?: string; submenu?: { label?: string; checked?: boolean }[] }[])[2]!.submenu!.find(
                (entry) => entry.label === "Dark Mode"
            )
        ).toMatchObject({ checked: true });
    });

    it("brings the running window back on a second launch", () => {
        const [window] = fake.windows;
        window!.calls.length = 0;
        for (const listener of fake.appListeners.get("second-instance") ?? []) {
            listener();
        }
        expect(window!.calls).toEqual(["restore", "focus"]);
        expect(fake.windows).toHaveLength(1);
    });

    it("opens a link out of the app in the browser only after asking, and only http(s)", async () => {
        const [window] = fake.windows;
        expect(window!.openHandler!({ url: "https://huggingface.co/models" })).toEqual({ action: "deny" });
        await vi.waitFor(() => expect(fake.opened).toEqual(["https://huggingface.co/models"]));
        expect(fake.messageBoxes.at(-1)).toMatchObject({ message: "Open huggingface.co in your browser?" });
        const numAsked = fake.messageBoxes.length;
        window!.openHandler!({ url: "file:///etc/passwd" });
        fake.messageBoxAnswer = 1;
        window!.openHandler!({ url: "https://example.com/" });
        await vi.waitFor(() => expect(fake.messageBoxes).toHaveLength(numAsked + 1));
        expect(fake.opened).toEqual(["https://huggingface.co/models"]);
    });

    it("on quit, shuts the engine down before letting the app go", async () => {
        const preventDefault = vi.fn();
        for (const listener of fake.appListeners.get("will-quit") ?? []) {
            listener({ preventDefault });
        }
        expect(preventDefault).toHaveBeenCalledOnce();
        await vi.waitFor(() => expect(fake.numQuits).toBe(1));
        const child = fake.forks[0]!.child as { posted: EngineCommand[] };
        expect(child.posted).toContainEqual({ type: "shutdown" });
    });

    it("saved the window's size and position as it moved, for the next start", async () => {
        const [window] = fake.windows;
        window!.bounds = { x: 200, y: 100, width: 1100, height: 760 };
        window!.emit("close");
        await vi.waitFor(() =>
            expect(JSON.parse(fs.readFileSync(path.join(fake.userData, "window-state.json"), "utf8"))).toEqual({
                bounds: { x: 200, y: 100, width: 1100, height: 760 },
                maximized: false,
                fullScreen: false
            })
        );
    });
});
