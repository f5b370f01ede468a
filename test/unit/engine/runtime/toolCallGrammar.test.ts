// renameRules keeps each tool's arguments grammar apart from the others' in one call grammar: every
// rule name renamed where defined and used, never inside a literal or a character class, and the
// root's trailing newlines (node-llama-cpp's end of a JSON answer) left out. The grammar itself is
// sampled under in test/model/host/toolCallsApi.test.ts.
import { describe, expect, it } from "vitest";
import { renameRules } from "../../../../engine/runtime/toolCallGrammar.js";

describe("renameRules", () => {
    it("renames rule names only, and ends the root where its JSON ends", () => {
        const grammar = [
            'root ::= "{" ws "\\"rule0\\"" ":" rule0 ws "}" "\\n\\n\\n\\n" [\\n]*',
            'rule0 ::= ( "\\"ws\\"" | [a-z\\]rule0] ) string-rule{0,4}',
            'string-rule ::= "\\"" [^"\\\\] "\\""',
            "ws ::= [ ]?"
        ].join("\n");
        expect(renameRules(grammar, "call0-")).toEqual([
            'call0-root ::= "{" call0-ws "\\"rule0\\"" ":" call0-rule0 call0-ws "}"',
            'call0-rule0 ::= ( "\\"ws\\"" | [a-z\\]rule0] ) call0-string-rule{0,4}',
            'call0-string-rule ::= "\\"" [^"\\\\] "\\""',
            "call0-ws ::= [ ]?"
        ]);
    });
});
