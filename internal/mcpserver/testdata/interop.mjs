// An MCP client nobody at askd wrote: the official TypeScript SDK. It connects
// over streamable HTTP, lists the tools and makes one ask_user_question call,
// printing one JSON line per step for the Go test to check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.ASKD_URL + "/mcp");
const headers = { Authorization: "Bearer " + process.env.ASKD_TOKEN, "Askd-Session": process.env.ASKD_SESSION };
const client = new Client({ name: "askd-interop", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
const out = (step, value) => console.log(JSON.stringify({ step, value }));

out("version", client.getServerVersion()?.name ?? null);
const { tools } = await client.listTools();
out("tools", tools.map((t) => ({ name: t.name, additionalProperties: t.inputSchema.additionalProperties })));

let progress = 0;
const result = await client.callTool(
  {
    name: "ask_user_question",
    arguments: {
      questions: [{
        question: "Which database?", header: "Database", multiSelect: false,
        options: [{ label: "SQLite", description: "embedded" }, { label: "Postgres", description: "shared" }],
      }],
    },
  },
  undefined,
  // The first progress notification is a line too: the Go test answers the
  // question once it is printed, so progress has provably reached this client.
  { timeout: 60000, resetTimeoutOnProgress: true, onprogress: () => { if (progress++ === 0) out("progress", true); } },
);
out("result", { structuredContent: result.structuredContent, text: result.content[0].text, isError: result.isError ?? false, progress });
await client.close();
