// Package mcpserver serves askd's agent surface over MCP (SPEC §2): the six
// tools ask_user_question, ask, request_approval, permission_prompt,
// check_ask and cancel_ask, as thin adapters over internal/app.
//
// # Stateless, with askd's own cancellation routing
//
// Handler serves streamable HTTP statelessly: askd runs every well-formed
// tools/call of its own tools itself (park.go: a waiting call parks on its
// connection, ~10 KB each), and hands everything else (server/discover,
// initialize, tools/list, ping, malformed requests) to the SDK's transport in
// stateless mode. A stateful server keeps each Mcp-Session-Id in one
// process's memory, so a second askd agent process behind a load balancer
// without sticky sessions answers "session not found" to half the requests;
// askd runs several agent processes on one PostgreSQL (SPEC §6), so every MCP
// request must be servable by any process. Stateless also lets Claude Code negotiate the
// 2026-07-28 revision, which it only does with stateless servers.
//
// Progress needs no session: notifications/progress travel on the response
// stream of the blocked tools/call itself, whichever process holds it.
//
// A client giving up on a call is a cut-off, not a withdrawal (SPEC §2.1):
// the ask stays pending to its own deadline, marked to be told, and no
// response is sent for the cancelled request (app's outcome.go holds the rules;
// only the transport is here). Cancellation is where the revisions differ,
// so askd handles it itself:
//
//   - 2026-07-28 (no initialize, no sessions): the revision's cancellation is
//     closing the request's response stream. A parked call notices its
//     connection close and cuts its ask off, on the process holding the
//     stream.
//   - 2025-06-18 and 2025-11-25: the client sends notifications/cancelled as a
//     separate POST, which a stateless SDK server drops because the ephemeral
//     session it lands on never saw the request. askd therefore gives such
//     clients an Mcp-Session-Id of its own at initialize (the SDK ignores it;
//     clients echo it), records in the store which ask each in-flight
//     tools/call waits on, keyed by agent, askd session, Mcp-Session-Id and
//     JSON-RPC id (app.Wait.Call, kept by app.Service.Expect), and records the cancellation and cuts
//     the ask off when a matching notifications/cancelled arrives
//     (app.Service.CallCancelled). Being in the store, not in memory, the
//     call is found whichever agent process the cancellation lands on
//     (several processes behind a load balancer, no sticky sessions); the
//     process holding the call hears of the cut-off through the store, finds
//     the cancellation, and ends the call without a response. A
//     cancellation that overtakes its call is kept, and the call ends as
//     soon as it records itself.
//   - A call cut off without cancellation on the old revisions (a killed
//     client, a dropped connection) is a cut-off too: its parked call goes,
//     the ask stays pending, to be told, check_ask {} lists it, and asking
//     again re-attaches to it. Every wait is bounded by askd (question
//     timeout, approval grace or timeout, check_ask's 60 s), never by the
//     client.
package mcpserver
