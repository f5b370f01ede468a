// The Node.js version Kvault asks for is the one its toolchain declares, everywhere it is stated.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MIN_NODE_VERSION, checkNodeVersion, compareVersions } from "../../../../main/devtools/nodeVersion.js";

const root = path.resolve(import.meta.dirname, "../../../..");
const readJson = (file: string): { engines?: { node?: string } } =>
    JSON.parse(fs.readFileSync(path.join(root, file), "utf8")) as { engines?: { node?: string } };

describe("the Node.js requirement", () => {
    it("is what electron and its download and rebuild tooling declare", () => {
        for (const file of [
            "node_modules/electron/package.json",
            "node_modules/@electron/get/package.json",
            "node_modules/@electron/rebuild/package.json"
        ]) {
            expect(readJson(file).engines?.node?.replace(/\s/g, ""), file).toBe(`>=${MIN_NODE_VERSION}`);
        }
    });

    it("is package.json's engines, the README's and the CI script's", () => {
        expect(readJson("package.json").engines?.node).toBe(`>=${MIN_NODE_VERSION}`);
        expect(fs.readFileSync(path.join(root, "README.md"), "utf8")).toContain(`Node.js ${MIN_NODE_VERSION} or newer`);
        expect(fs.readFileSync(path.join(root, ".ci/run"), "utf8")).toContain(`NODE_MINIMUM=${MIN_NODE_VERSION}`);
    });

    it("compares versions part by part, as numbers", () => {
        expect(compareVersions("22.12.0", "22.12.0")).toBe(0);
        expect(compareVersions("22.9.0", "22.12.0")).toBe(-1);
        expect(compareVersions("v24.1.0", "22.12.0")).toBe(1);
        expect(compareVersions("20.20.2", "22.12.0")).toBe(-1);
    });

    it("warns on an older Node with the version it needs, and is quiet on a new enough one", () => {
        expect(checkNodeVersion("22.12.0")).toBeUndefined();
        expect(checkNodeVersion("24.0.0")).toBeUndefined();
        expect(checkNodeVersion("20.20.2")).toMatch(/^Node\.js 20\.20\.2 is older than the 22\.12\.0 .+ Install Node\.js 22/);
    });
});
