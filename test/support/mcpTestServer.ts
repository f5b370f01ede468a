// An MCP server written for the tests with the official SDK: over stdio (run this file with
// `node --import tsx`) or streamable HTTP on loopback (startMcpHttpServer). Its tools: `lookup`
// answers "<key> is filed under shelf 7", `hang` never answers, `crash` ends the process
// mid-call, `garbage` writes a line that is not JSON-RPC and never answers, `big` answers
// `size` characters, `flood` more than a window holds; `--tools lookup,hang` lists only those.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** Words `flood` answers: more tokens than the browser tests' window (2,048) at any tokenizer's rate. */
const FLOOD_WORDS = 8_000;

export const lookupAnswer = (key: string): string => `${key} is filed under shelf 7`;

// An enum alone (no "type" beside it): the form a grammar enforces, so a forced call names a key.
const keySchema = { type: "object", properties: { key: { enum: ["atlas", "bravo"] } }, required: ["key"] };

/** `--tools a,b` on the command line lists only those tools (a forced call then has one tool to choose). */
function offeredTools(): (name: string) => boolean {
    const index = process.argv.indexOf("--tools");
    const names = index === -1 ? undefined : new Set(process.argv[index + 1]?.split(","));
    return (name) => names === undefined || names.has(name);
}

function createServer(): Server {
    const server = new Server({ name: "kvault-test-tools", version: "1.0.0" }, { capabilities: { tools: {} } });
    const offered = offeredTools();
    server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [
            { name: "lookup", description: "Finds the shelf a key is filed under.", inputSchema: keySchema },
            { name: "hang", description: "Never answers.", inputSchema: { type: "object", properties: {} } },
            { name: "crash", description: "Ends the server mid-call.", inputSchema: { type: "object", properties: {} } },
            { name: "garbage", description: "Writes a line that is not JSON-RPC.", inputSchema: { type: "object", properties: {} } },
            { name: "flood", description: "Answers far more text than a window holds.", inputSchema: { type: "object", properties: {} } },
            {
                name: "big",
                description: "Answers size characters.",
                inputSchema: { type: "object", properties: { size: { type: "integer" } }, required: ["size"] }
            }
        ].filter((tool) => offered(tool.name))
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const args = request.params.arguments ?? {};
        switch (request.params.name) {
            case "lookup":
                return { content: [{ type: "text", text: lookupAnswer(String(args.key)) }] };
            case "hang":
                return await new Promise<never>(() => undefined);
            case "crash":
                process.exit(3);
            // falls through: exit does not return
            case "garbage":
                process.stdout.write("this is not json-rpc\n");
                return await new Promise<never>(() => undefined);
            case "flood":
                return { content: [{ type: "text", text: "shelf ".repeat(FLOOD_WORDS) }] };
            case "big":
                return { content: [{ type: "text", text: "x ".repeat(Math.ceil(Number(args.size) / 2)).slice(0, Number(args.size)) }] };
            default:
                return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
        }
    });
    return server;
}

/** The HTTP server on 127.0.0.1 (a fresh MCP server per session, stateless); its URL and how to stop it. */
export async function startMcpHttpServer(): Promise<{ readonly url: string; close(): Promise<void> }> {
    const httpServer = http.createServer((req, res) => {
        const server = createServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on("close", () => {
            void transport.close();
            void server.close();
        });
        void server.connect(transport).then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
    const { port } = httpServer.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}/mcp`,
        close: () =>
            new Promise<void>((resolve) => {
                httpServer.closeAllConnections();
                httpServer.close(() => resolve());
            })
    };
}

// Run as a command with --stdio (imported by a test, the HTTP server is used instead).
if (process.argv.includes("--stdio")) {
    await createServer().connect(new StdioServerTransport());
}
