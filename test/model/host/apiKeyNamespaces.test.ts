import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeys } from "../../../host/http/ApiKeys.js";
import { tinyEngineConfig } from "../../support/engineFixtures.js";
import { generatedModelPath } from "../../support/generatedModels.js";
import { startInProcessApiServer, type InProcessApiServer } from "../../support/inProcessApiServer.js";

const DEFAULT_KEY = "default-key-0123456789";
const ALICE_KEY = "alice-key-0123456789";
const BOB_KEY = "bob-key-0123456789";

interface Completion {
    readonly choices: readonly { readonly message: { readonly content: string } }[];
    readonly usage: { readonly prompt_tokens: number; readonly prompt_tokens_details: { readonly cached_tokens: number } };
}

describe("each API key has its own workspace namespace", () => {
    let api: InProcessApiServer;
    let url: string;
    const keys = new ApiKeys([
        { id: "alice", key: ALICE_KEY },
        { id: "bob", key: BOB_KEY }
    ]);

    beforeAll(async () => {
        api = await startInProcessApiServer({
            apiKey: DEFAULT_KEY,
            engine: { modelPath: generatedModelPath("tiny"), ...tinyEngineConfig, gpu: false },
            server: { extraApiKeys: keys, requestTimeoutMs: 60_000 }
        });
        url = api.url;
    });
    afterAll(async () => {
        await api?.close();
    });

    const post = (key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
        fetch(`${url}/v1/chat/completions`, {
            method: "POST",
            headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...headers },
            body: JSON.stringify(body)
        });
    const complete = async (key: string, messages: readonly { role: string; content: string }[], user = "shared"): Promise<Completion> => {
        const response = await post(key, { model: "tiny", messages, user, max_tokens: 6, temperature: 0 });
        expect(response.status).toBe(200);
        return (await response.json()) as Completion;
    };

    it("gives a second key naming the same workspace none of the first's KV, and its own answers", async () => {
        const first = [{ role: "user", content: "My secret is pages." }];
        const aliceFirst = await complete(ALICE_KEY, first);
        const followUp = [
            ...first,
            { role: "assistant", content: aliceFirst.choices[0]!.message.content },
            { role: "user", content: "Again?" }
        ];

        // Within alice's namespace the workspace holds her prompt: cached_tokens says how much matches.
        const aliceAgain = await complete(ALICE_KEY, followUp);
        expect(aliceAgain.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);

        // bob names the same workspace and guesses the same prompt: nothing of alice's is reused, nothing told.
        const bobGuess = await complete(BOB_KEY, followUp);
        expect(bobGuess.usage.prompt_tokens_details.cached_tokens).toBe(0);
        // The header names the workspace the same way, in the key's namespace.
        const viaHeader = await post(
            BOB_KEY,
            { model: "tiny", messages: followUp, max_tokens: 6, temperature: 0 },
            { "X-Kvault-Workspace": "shared" }
        );
        expect(((await viaHeader.json()) as Completion).usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0); // bob's own, now

        // The default key keeps today's namespace ("api:<name>"), which is neither alice's nor bob's.
        const viaDefault = await complete(DEFAULT_KEY, followUp);
        expect(viaDefault.usage.prompt_tokens_details.cached_tokens).toBe(0);
        // bob's answer is the one a workspace holding nothing gives (greedy), not one shaped by alice's KV:
        // her reused tokens are the generated ones, which the tiny model's byte tokens do not re-tokenize to.
        expect(bobGuess.usage.prompt_tokens).toBe(viaDefault.usage.prompt_tokens);
        expect(bobGuess.choices[0]!.message.content).toBe(viaDefault.choices[0]!.message.content);
        const names = api.service.snapshot().workspaces.map((workspace) => workspace.workspace);
        // Each key's names are in its generation's namespace (api@ID~GENERATION:), the default key's where they always were.
        expect(keys.namespaceOf("alice")).toMatch(/^alice~[0-9a-f]{16}$/);
        expect(names).toEqual(
            expect.arrayContaining([`api@${keys.namespaceOf("alice")}:shared`, `api@${keys.namespaceOf("bob")}:shared`, "api:shared"])
        );
    });

    it("refuses a revoked or unknown key with 401, and keeps the others working", async () => {
        const messages = [{ role: "user", content: "Hello." }];
        expect(keys.revoke("bob")).toBe(true);
        for (const key of [BOB_KEY, "not-a-key-at-all-42"]) {
            const refused = await post(key, { model: "tiny", messages, max_tokens: 2 });
            expect(refused.status).toBe(401);
            expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
                code: "invalid_api_key",
                message: expect.stringMatching(/^Incorrect API key: it is not one this server knows, or it was revoked\./)
            });
        }
        expect((await complete(ALICE_KEY, messages, "other")).choices[0]!.message.content.length).toBeGreaterThan(0);

        // /metrics lists every workspace: the default key's only.
        expect((await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${ALICE_KEY}` } })).status).toBe(401);
        expect((await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${DEFAULT_KEY}` } })).status).toBe(200);
    });
});
