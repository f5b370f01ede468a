import { describe, expect, it } from "vitest";
import { cliInvocation } from "../../../../main/cli/cliInvocation.js";

describe("cliInvocation: the desktop app's binary run as the kvault command", () => {
    it("takes a packaged app's first argument as a command word", () => {
        expect(cliInvocation(["/usr/bin/kvault", "ls", "--json"], true)).toEqual(["ls", "--json"]);
        expect(cliInvocation(["/opt/Kvault/kvault", "launch", "claude", "--", "-p", "hi"], true)).toEqual([
            "launch",
            "claude",
            "--",
            "-p",
            "hi"
        ]);
    });

    it("skips the app directory Electron is given in development", () => {
        expect(cliInvocation(["/x/electron", ".", "ps"], false)).toEqual(["ps"]);
        expect(cliInvocation(["/x/electron", "."], false)).toBeUndefined();
    });

    it("leaves a plain launch, a file to open or Chromium's switches to the app", () => {
        expect(cliInvocation(["/usr/bin/kvault"], true)).toBeUndefined();
        expect(cliInvocation(["/usr/bin/kvault", "--no-sandbox"], true)).toBeUndefined();
        expect(cliInvocation(["/usr/bin/kvault", "/home/u/model.gguf"], true)).toBeUndefined();
        expect(cliInvocation(["/usr/bin/kvault", "lsx"], true)).toBeUndefined();
    });
});
