// A small client of askd's HTTP API, as an integrator writes one: its types
// generated from askd's OpenAPI document by openapi-typescript (askd.d.ts),
// its calls made through openapi-fetch. An agent creates an ask, a person
// answers it (and answers it again, which askd refuses), and the agent reads
// the outcome. It prints what it saw as one line of JSON.
import createClient from "openapi-fetch";
import type { components, paths } from "./askd.js";

type Ask = components["schemas"]["Ask"];

// Node's process, declared here rather than with @types/node.
declare const process: { env: Record<string, string | undefined>; exitCode?: number };

const baseUrl = process.env.ASKD_URL ?? "";
const session = "ts-client";
const agent = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${process.env.ASKD_AGENT_TOKEN}`, "Askd-Session": session } });
const person = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${process.env.ASKD_HUMAN_TOKEN}` } });

async function main(): Promise<void> {
  const created = await agent.POST("/api/asks", {
    body: {
      kind: "decision",
      title: "Ship the TypeScript client?",
      options: [{ label: "yes", description: "today" }, { label: "not yet" }],
      recommended: "yes",
    },
  });
  if (!created.data) throw new Error(`create: ${created.response.status} ${JSON.stringify(created.error)}`);
  const ask: Ask = created.data;

  const pending = await person.GET("/api/asks", { params: { query: { session, status: "pending" } } });
  if (!pending.data) throw new Error(`list: ${pending.response.status} ${JSON.stringify(pending.error)}`);
  const listed = pending.data.asks.map((a) => a.id);

  const answered = await person.POST("/api/asks/{id}/answer", { params: { path: { id: ask.id } }, body: { answer: "yes" } });
  if (!answered.data) throw new Error(`answer: ${answered.response.status} ${JSON.stringify(answered.error)}`);

  // The first answer wins: a second is refused, with the ask as it is.
  const again = await person.POST("/api/asks/{id}/answer", { params: { path: { id: ask.id } }, body: { answer: "not yet" } });
  const conflict = again.error ? { status: again.response.status, code: again.error.code, settled_by: again.error.ask?.settled_by } : null;

  const read = await agent.GET("/api/asks/{id}", { params: { path: { id: ask.id } } });
  if (!read.data) throw new Error(`read: ${read.response.status} ${JSON.stringify(read.error)}`);
  const outcome = read.data;

  console.log(JSON.stringify({
    id: ask.id,
    created: ask.status,
    listed,
    answered_by: answered.data.settled_by,
    conflict,
    read: { status: outcome.status, answer: outcome.answer?.answer, told: outcome.told_at !== undefined },
  }));
}

// The types have teeth: each call below is a mistake tsc must refuse, and
// an @ts-expect-error that nothing needed fails the build. Never called.
export function mistakes(): void {
  // @ts-expect-error: a kind askd does not have
  void agent.POST("/api/asks", { body: { kind: "pigeon", title: "Coo?" } });
  // @ts-expect-error: a decision askd does not know
  void person.POST("/api/asks/{id}/answer", { params: { path: { id: 1 } }, body: { decision: "maybe" } });
  // @ts-expect-error: an option needs its label
  void agent.POST("/api/asks", { body: { kind: "decision", options: [{ description: "no label" }] } });
  // @ts-expect-error: a path askd does not serve
  void person.GET("/api/colours");
  // @ts-expect-error: an ask's id is a number
  void person.GET("/api/asks/{id}", { params: { path: { id: "seven" } } });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
