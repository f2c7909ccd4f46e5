// A client that gives up: the official TypeScript SDK calls ask_user_question
// with a short per-request timeout, over streamable HTTP or over stdio through
// `askd mcp` (ASKD_TRANSPORT=stdio, ASKD_BINARY the askd binary). It prints one
// JSON line per step for the Go test, and waits for a line on stdin before
// each step that follows something the test does (answering as the person).
//
//   cutoff   the first call failed (its error's code and message)
//   again    after "again" on stdin: the same questions, called again
//   cutoff2  a second question, cut off the same way and never called again
//   problems after "close" on stdin: what the SDK reported through onerror,
//            console.error or console.warn (e.g. a response for an unknown
//            message ID)
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const problems = [];
for (const level of ["error", "warn"]) {
  const orig = console[level];
  console[level] = (...args) => {
    problems.push(args.map(String).join(" "));
    orig(...args);
  };
}
const out = (step, value) => console.log(JSON.stringify({ step, value }));
const stdin = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const expect = async (word) => {
  const { value, done } = await stdin.next();
  if (done || value.trim() !== word) throw new Error(`stdin: want ${word}, got ${done ? "end of input" : value}`);
};

const { ASKD_URL, ASKD_TOKEN, ASKD_SESSION, ASKD_TRANSPORT, ASKD_BINARY } = process.env;
let transport;
if (ASKD_TRANSPORT === "stdio") {
  transport = new StdioClientTransport({
    command: ASKD_BINARY,
    args: ["mcp", "--log-level", "warn"],
    env: { ASKD_URL, ASKD_TOKEN, ASKD_SESSION },
    stderr: "inherit",
  });
} else {
  const headers = { Authorization: "Bearer " + ASKD_TOKEN, "Askd-Session": ASKD_SESSION };
  transport = new StreamableHTTPClientTransport(new URL(ASKD_URL + "/mcp"), { requestInit: { headers } });
}
const client = new Client({ name: "askd-cutoff", version: "1.0.0" });
client.onerror = (err) => problems.push(`onerror: ${err?.message ?? err}`);
await client.connect(transport);

const question = (text, header, labels) => ({
  name: "ask_user_question",
  arguments: {
    questions: [{
      question: text, header, multiSelect: false,
      options: labels.map((label) => ({ label, description: label.toLowerCase() })),
    }],
  },
});
const first = question("Which database?", "Database", ["SQLite", "Postgres"]);
const second = question("Which region?", "Region", ["Europe", "America"]);

// cutOff calls with a client timeout short enough to give up while the ask waits.
const cutOff = async (step, params) => {
  try {
    const result = await client.callTool(params, undefined, { timeout: 1500 });
    out(step, { returned: result });
  } catch (err) {
    out(step, { code: err.code ?? null, message: String(err.message ?? err) });
  }
};

await cutOff("cutoff", first);
await expect("again");
const result = await client.callTool(first, undefined, { timeout: 20000 });
out("again", { structuredContent: result.structuredContent, text: result.content?.[0]?.text ?? null, isError: result.isError ?? false });
await cutOff("cutoff2", second);
await expect("close");
await client.ping(); // a round trip: a stray response to a cut-off call would have come before it
await client.close();
out("problems", problems);
process.exit(0);
