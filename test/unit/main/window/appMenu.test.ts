// The application menu as main builds it: Electron's standard roles, the platform's conventions,
// and the shortcuts that reach the renderer as AppCommands.
import { describe, expect, it } from "vitest";
import { parseAppCommand, type AppCommand } from "../../../../contract/appCommands.js";
import { appMenuTemplate, type AppMenuOptions } from "../../../../main/window/appMenu.js";

type MenuItemConstructorOptions = ReturnType<typeof appMenuTemplate>[number];

function build(options: Partial<AppMenuOptions> = {}) {
    const sent: AppCommand[] = [];
    const calls: string[] = [];
    const template = appMenuTemplate(
        { platform: "linux", development: false, darkMode: false, homepage: "https://github.com/kvault/kvault", ...options },
        {
            send: (command) => sent.push(command),
            openModel: () => calls.push("openModel"),
            toggleDarkMode: () => calls.push("toggleDarkMode"),
            checkForUpdates: () => calls.push("checkForUpdates"),
            openExternal: (url) => calls.push(`openExternal ${url}`)
        }
    );
    const items = template.flatMap(function flatten(item: MenuItemConstructorOptions): MenuItemConstructorOptions[] {
        return [item, ...(Array.isArray(item.submenu) ? item.submenu.flatMap(flatten) : [])];
    });
    const item = (label: string): MenuItemConstructorOptions => {
        const found = items.find((candidate) => candidate.label === label);
        expect(found, label).toBeDefined();
        return found!;
    };
    const click = (label: string): void => (item(label).click as () => void)();
    const roles = items.map((candidate) => candidate.role).filter((role) => role !== undefined);
    return { template, items, item, click, roles, sent, calls };
}

describe("appMenuTemplate", () => {
    it("has the standard menus and roles: edit, zoom, full screen, window, quit", () => {
        const { template, roles } = build();
        expect(template.map((menu) => menu.label ?? menu.role)).toEqual(["&File", "&Edit", "&View", "W&orkspace", "windowMenu", "help"]);
        for (const role of [
            "undo",
            "redo",
            "cut",
            "copy",
            "paste",
            "selectAll",
            "resetZoom",
            "zoomIn",
            "zoomOut",
            "togglefullscreen",
            "quit",
            "about"
        ]) {
            expect(roles, role).toContain(role);
        }
        expect(roles).not.toContain("toggleDevTools"); // an installed app has no developer tools in its menu
        expect(build({ development: true }).roles).toEqual(expect.arrayContaining(["reload", "forceReload", "toggleDevTools"]));
    });

    it("on macOS: the app menu with About, Settings, Hide and Quit, and Close under File", () => {
        const { template, roles, item } = build({ platform: "darwin" });
        expect(template[0]).toMatchObject({ role: "appMenu" });
        const appMenu = template[0]!.submenu as MenuItemConstructorOptions[];
        expect(appMenu.map((entry) => entry.role ?? entry.label ?? entry.type)).toEqual([
            "about",
            "separator",
            "Settings…",
            "separator",
            "services",
            "separator",
            "hide",
            "hideOthers",
            "unhide",
            "separator",
            "quit"
        ]);
        expect(roles.filter((role) => role === "quit")).toHaveLength(1);
        expect(roles).toContain("close");
        expect(item("Settings…").accelerator).toBe("CmdOrCtrl+,");
    });

    it("sends New Workspace, Find, Settings and Workspace 1–9 to the renderer as valid AppCommands", () => {
        const { item, click, sent } = build();
        expect(item("New Workspace").accelerator).toBe("CmdOrCtrl+N");
        expect(item("Find…").accelerator).toBe("CmdOrCtrl+F");
        click("New Workspace");
        click("Find…");
        click("Settings");
        for (let position = 1; position <= 8; position++) {
            expect(item(`Workspace ${position}`).accelerator).toBe(`CmdOrCtrl+${position}`);
            click(`Workspace ${position}`);
        }
        expect(item("Last Workspace").accelerator).toBe("CmdOrCtrl+9");
        click("Last Workspace");
        expect(sent.slice(0, 3)).toEqual([{ command: "newWorkspace" }, { command: "find" }, { command: "openSettings" }]);
        expect(sent.slice(3).map((command) => (command as { position: number }).position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
        for (const command of sent) {
            expect(parseAppCommand(JSON.parse(JSON.stringify(command)))).toEqual(command);
        }
    });

    it("keeps in main what main does: Open Model, Dark Mode, updates and the project's pages", () => {
        const { item, click, calls, sent } = build({ darkMode: true });
        expect(item("Open Model…").accelerator).toBe("CmdOrCtrl+O");
        expect(item("Dark Mode")).toMatchObject({ type: "checkbox", checked: true });
        click("Open Model…");
        click("Dark Mode");
        click("Check for Updates…");
        click("Kvault on GitHub");
        click("Report a Problem");
        expect(calls).toEqual([
            "openModel",
            "toggleDarkMode",
            "checkForUpdates",
            "openExternal https://github.com/kvault/kvault",
            "openExternal https://github.com/kvault/kvault/issues"
        ]);
        expect(sent).toEqual([]);
        expect(build({ homepage: undefined }).items.some((entry) => entry.label === "Kvault on GitHub")).toBe(false);
    });

    it("gives no two items the same shortcut", () => {
        for (const platform of ["darwin", "linux", "win32"] as const) {
            const accelerators = build({ platform })
                .items.map((entry) => entry.accelerator)
                .filter((accelerator) => accelerator !== undefined);
            expect(new Set(accelerators).size, platform).toBe(accelerators.length);
        }
    });
});

describe("parseAppCommand", () => {
    it("refuses what is not one of the commands, exactly", () => {
        for (const value of [
            null,
            "find",
            { command: "quit" },
            { command: "find", extra: 1 },
            { command: "selectWorkspace", position: 0 },
            { command: "selectWorkspace", position: 10 },
            { command: "selectWorkspace", position: 1.5 },
            { command: "openModelFile", path: "" },
            { command: "openModelFile", path: "x".repeat(5_000) }
        ]) {
            expect(parseAppCommand(value), JSON.stringify(value)).toBeUndefined();
        }
        expect(parseAppCommand({ command: "openModelFile", path: "/models/a.gguf" })).toEqual({
            command: "openModelFile",
            path: "/models/a.gguf"
        });
    });
});
