// askd's plugin for OpenCode, written by `askd install opencode` (SPEC §18).
// askd install replaces this file each time it runs; a copy of any other
// text is kept beside it.
//
// Every tool call goes to askd before it runs (tool.execute.before): askd
// lets it through (its own tools, reads), puts it to a person in the inbox,
// or denies it; a person's edit is run as edited. A deny, and anything that
// keeps askd's decision from this plugin (askd unreachable, a refused token,
// an error, a reply that is no decision), throws, and OpenCode gives the
// model the error instead of running the tool: under `opencode run --auto`
// nothing else asks, so the plugin fails closed.
//
// askd's server is the one OpenCode's own config names: the MCP entry askd
// (its url, less /mcp). An MCP tool is told apart by the MCP servers that
// config names (OpenCode calls a server's tool SERVER_TOOL, both with
// characters other than letters, digits, _ and - made _), never by splitting
// a tool's name at an underscore.
//
// The token and session come from the environment OpenCode runs in
// (ASKD_TOKEN, ASKD_SESSION), as the MCP entry's headers do. When
// ASKD_OPENCODE_SESSION_FILE is set (`askd opencode` sets it), the plugin
// writes the session's id there, so that the wrapper can continue it with
// each answer (`opencode run -s ID "answer"`).

import { writeFileSync } from "node:fs";

const SERVER = "askd"; // the MCP entry askd install writes

const sanitize = (s) => s.replace(/[^a-zA-Z0-9_-]/g, "_");

const notRun = (why) =>
  new Error(`This call was not run: askd, where a person approves it, gave no decision (${why}). Tell the user; do not try to get around it.`);

export const AskdPlugin = async ({ client }) => {
  // Read once, at the first tool call: OpenCode's config, as it resolved it.
  let servers;
  const lookup = async () => {
    if (!servers) {
      servers = (async () => {
        const res = await client.config.get();
        const mcp = (res && res.data && res.data.mcp) || {};
        const entry = mcp[SERVER];
        const url = entry && typeof entry.url === "string" ? entry.url : "";
        return {
          base: url.replace(/\/+$/, "").replace(/\/mcp$/, ""),
          // Longest first: a server named a_b before one named a.
          prefixes: Object.keys(mcp)
            .map((name) => ({ name, prefix: sanitize(name) + "_" }))
            .sort((x, y) => y.prefix.length - x.prefix.length),
        };
      })();
    }
    return servers;
  };
  const sessionFile = process.env.ASKD_OPENCODE_SESSION_FILE;
  let reported = false;

  return {
    "chat.message": async (input) => {
      if (!sessionFile || reported || !input || !input.sessionID) return;
      reported = true;
      try {
        writeFileSync(sessionFile, input.sessionID, { flag: "wx" }); // the first session asked in: the run's
      } catch {
        // Written already, by this run's first message.
      }
    },

    "tool.execute.before": async (input, output) => {
      let config;
      try {
        config = await lookup();
      } catch (e) {
        servers = undefined;
        throw notRun(`OpenCode's config could not be read: ${e && e.message}`);
      }
      if (!config.base) throw notRun(`OpenCode's config has no MCP server named ${SERVER} with a url: run askd install opencode`);
      const token = process.env.ASKD_TOKEN;
      if (!token) throw notRun("ASKD_TOKEN is not set where OpenCode runs");
      const args = output.args || {};
      const body = {
        hook_event_name: "tool.execute.before",
        session_id: input.sessionID,
        tool_name: input.tool,
        tool_input: args,
        tool_use_id: input.callID,
      };
      const server = config.prefixes.find((s) => input.tool.startsWith(s.prefix) && input.tool.length > s.prefix.length);
      if (server) body.mcp_context = { server_name: server.name, tool_name: input.tool.slice(server.prefix.length) };
      const headers = { "Content-Type": "application/json", Authorization: `Bearer ${token}` };
      if (process.env.ASKD_SESSION) headers["Askd-Session"] = process.env.ASKD_SESSION;

      let reply;
      try {
        const res = await fetch(`${config.base}/hooks/opencode`, { method: "POST", headers, body: JSON.stringify(body) });
        const text = await res.text();
        if (!res.ok) {
          let msg = text.trim();
          try {
            msg = JSON.parse(text).error || msg;
          } catch {
            // Not askd's error JSON: its text as it came.
          }
          throw new Error(`askd at ${config.base} answered ${res.status}: ${msg}`);
        }
        reply = JSON.parse(text);
      } catch (e) {
        throw notRun(e && e.message ? e.message : String(e));
      }
      if (reply && reply.decision === "allow") {
        if (reply.args && typeof reply.args === "object" && output.args) {
          // The person's edit: the call runs with these arguments, the same object.
          for (const k of Object.keys(output.args)) delete output.args[k];
          Object.assign(output.args, reply.args);
        }
        return;
      }
      if (reply && reply.decision === "deny" && typeof reply.reason === "string") throw new Error(reply.reason);
      throw notRun("its reply was no decision");
    },
  };
};
