import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { readWorkspaceMeta } from "../../../../contract/rpc/storeSchemas.js";
import { useTempStore, workspaceA, workspaceB } from "./storeFixtures.js";

// A workspace's `backend` (a remote backend's name and model; absent: this computer) is part of
// format 3's workspace list, optional, so a folder written before backends reads as it did.
describe("the workspace backend field", () => {
    const temp = useTempStore();
    const onGpu = { ...workspaceB, backend: { name: "gpu", model: "org/model-7b" } };

    it("reads a format-3 folder written before backends as it was: every workspace on this computer", async () => {
        fs.mkdirSync(temp.paths.directory, { recursive: true });
        const written = { v: 3, selectedId: workspaceA.id, workspaces: [workspaceA] };
        fs.writeFileSync(temp.paths.metadata, `${JSON.stringify(written, null, 2)}\n`);
        const store = await temp.open();
        const { workspaces, problems } = await store.load();
        expect(problems).toEqual([]);
        expect(workspaces).toEqual([{ ...workspaceA, messages: [] }]);
        expect(workspaces[0]).not.toHaveProperty("backend");
        await store.close();
        expect(JSON.parse(fs.readFileSync(temp.paths.metadata, "utf8"))).toEqual(written);
    });

    it("keeps a workspace's backend across a rename and a restart, and a local one without the field", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.saveWorkspace(onGpu);
        await store.saveWorkspace({ ...onGpu, name: "Renamed" });
        expect(await store.findMeta(onGpu.id)).toEqual({ ...onGpu, name: "Renamed" });
        await store.close();
        const list = JSON.parse(fs.readFileSync(temp.paths.metadata, "utf8")) as { v: number; workspaces: Record<string, unknown>[] };
        expect(list.v).toBe(3);
        expect(list.workspaces[0]).not.toHaveProperty("backend");
        expect(list.workspaces[1]!.backend).toEqual({ name: "gpu", model: "org/model-7b" });
        const again = await temp.open();
        expect((await again.load()).workspaces.map(({ id, backend }) => [id, backend])).toEqual([
            [workspaceA.id, undefined],
            [onGpu.id, onGpu.backend]
        ]);
        expect(await again.findMeta("ui-none")).toBeUndefined();
        const copy = await again.duplicateWorkspace(onGpu.id, "ui-copy", "Copy");
        expect(copy.backend).toEqual(onGpu.backend);
        await again.close();
    });

    it.each([
        [{ name: "has space", model: "m" }, /backend\.name.*is not a backend name/],
        [{ name: "gpu", model: "" }, /backend\.model.*is not a model id of 1 to 512 characters/],
        ["gpu", /backend is not an object with the backend's name and model/]
    ])("refuses the backend %j, saying why", (backend, reason) => {
        const read = readWorkspaceMeta({ ...workspaceA, backend });
        expect(read.ok).toBe(false);
        expect(read.ok ? "" : read.reason).toMatch(reason);
    });
});
