// Package mcpgate is askd gate mcp (SPEC §14): an MCP server in front of
// another, between any MCP client and any MCP server, that lets a tool call
// through once a person approved it in askd and puts the server's questions
// to a person, whatever the client supports. cmd/askd runs it as
// `askd gate mcp` through Run.
//
// # Shapes and transports
//
// Three shapes, one gate: stdio around a command (the server is the gate's
// child: its environment the gate's less every ASKD_* variable, its stderr
// the gate's), stdio in front of a remote streamable HTTP server
// (--upstream), and either of those served as streamable HTTP (--listen).
// Each client session is a session (session.go) between two conns: the
// client's side and the server's. The gate is a JSON-RPC proxy at the level
// of messages: every message passes as the bytes it came as, both ways,
// but for the few it takes or changes (below). The conns are written here
// rather than taken from the go-sdk, whose transports decode each message
// into its own types and encode it again (an id of 1.0 becomes 1; a large
// number loses digits), keep the session's protocol revision in its own
// client or server, and on the server side belong to an mcp.Server:
//
//   - lineConn (stdio.go): MCP's stdio, one message a line;
//   - httpUpstream (upstream.go): a streamable HTTP client that POSTs each
//     message, reads JSON or SSE answers, keeps Mcp-Session-Id and the
//     revision (from initialize, or a 2026-07-28 request's _meta), sends
//     2026-07-28's Mcp-Method and Mcp-Name, opens the standalone GET stream
//     on 2025 revisions, and answers a request the server dropped with an
//     error of its own;
//   - frontConn (listen.go, frontconn.go): a streamable HTTP server, with
//     askd's Host and Origin rules and, off loopback, a Bearer token.
//
// # What the gate takes, changes and makes
//
//   - tools/call: held until it may go on (call.go): at once for a tool
//     --allow names; otherwise once an approval in askd says yes
//     (approval.go, onecall.go). A refusal is an error result (isError), and
//     the server never sees the call.
//   - initialize (2025 revisions) and each 2026-07-28 request's _meta
//     client capabilities: elicitation declared to the server, so that it
//     asks (elicit.go); unless --elicitation client and the client
//     declares it.
//   - the server's elicitation/create requests, and 2026-07-28
//     input_required tool results whose requests are elicitations: put to
//     a person as form asks; the gate answers the server, or calls again
//     with the answers under an id of its own ("askd-gate-<instance>-<n>",
//     never one a client has in flight), the answer to which goes to the
//     client under its own id.
//   - notifications/cancelled: for a call the gate holds, it goes no
//     further (the server never heard of the call); for a retry, it names
//     the gate's id. From the server, for an elicitation the gate puts to a
//     person, it withdraws the form ask.
//   - progress: a held call with a progress token hears at least every
//     25 s that it waits (progress 1, 2, ...; the server's own progress,
//     once it has the call, goes on from its own numbers).
//   - a JSON-RPC batch: refused (MCP 2025-06-18 and later have none, and a
//     batch passed whole would carry calls past the gate); so is a client's
//     message that parsers could read two ways (a key given twice, text
//     that is not UTF-8: {"method":"tools/call","method":"ping"} is a ping
//     to encoding/json and a call to a parser that keeps the first key), a
//     tools/call without an id, and a tools/call carrying answers
//     (inputResponses, requestState) to questions the server did not ask
//     through the gate, which would answer them where the person was to.
//
// Everything else passes unchanged: tools/list and every other list,
// resources, prompts, completions, logging, progress, list_changed, pings,
// cancellations of calls the server has, and initialize's result.
//
// # A call's approval
//
// kind approval, tool_name mcp__NAME__TOOL (Claude Code's name for the
// tool: one rule or policy covers it through a hook or the gate), payload
// the arguments in canonical JSON, details the arguments rendered (each in
// a code block, control characters as escapes), source NAME, title "Call
// TOOL on NAME", a key naming the call, one_call and keep_untold
// (onecall.go: one approval answers one call).
// Arguments that are no object, hold a key twice or text that is not
// UTF-8, or exceed askd's 256 KiB payload limit are refused before askd is
// asked. The gate asks, then waits by asking again with the key (POST
// /api/asks?wait=), in one request for the whole --wait (at most an hour
// each): askd takes a request cut short (the client gave up, the gate
// stopped or was killed) as the call's cut-off, pending and to be told,
// never withdrawn, and one that ends at its wait's end as the call's end,
// no sooner (a call given up before askd began its wait is marked so with
// a wait of a moment). A reverse proxy in front of askd must let a request
// stay silent that long. A decision is read untold and marked told (POST
// /api/asks/{id}/told) before it is used; a call whose mark was not the
// one asks anew. Approved: the call goes on as the client sent it;
// modified: with the person's arguments in place of the client's. After
// --wait, an error result says the approval is still pending and that the
// same call picks it up. askd unreachable, at its pending cap, refusing
// the approval, or failing to mark it: an error result says so; a gate
// fails closed.
//
// # Choices where SPEC §14 is silent
//
//   - The token comes from ASKD_TOKEN or --token-file (mode 0600: one the
//     group or others may read is refused, naming the rule), never from a
//     flag, so that it is in no command line and no client's config.
//     --name, --allow, --upstream, --upstream-header, --listen,
//     --listen-token-file and --allowed-host read no environment variable.
//   - NAME is one word of printable characters, at most 100 (askd's limit
//     for source).
//   - The listener serves /mcp. --allowed-host adds names it answers to,
//     as askd serve's --allowed-hosts does. An initialize starts a session
//     with a server of its own; requests that name no session (2026-07-28)
//     share one, under ids and progress tokens the listener gives them.
//   - When the server goes away, every call it had and every held call gets
//     an error result (a held call's approval stays pending), then the gate
//     ends (stdio), so that the client starts it again; a listener's
//     session ends, and the client initializes again.
//   - A stopped child gets its stdin closed, then SIGTERM after 2 s, then
//     SIGKILL.
//   - A form ask is not bounded by --wait: the server bounds its own wait
//     and cancels, and askd times a form out (--elicitation-timeout). An
//     input_required result that asks for more than elicitations (sampling,
//     roots) goes to the client as it is; its retry passes as the call it
//     continues, without a new approval.
package mcpgate
