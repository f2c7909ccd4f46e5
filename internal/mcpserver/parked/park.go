// Package parked holds MCP tool calls that wait for a person, each parked on
// its own HTTP connection, and carries their messages to the wire.
//
// A tool call that waits for a person may wait minutes, and thousands may
// wait at once (SPEC §8: 10,000 blocked calls at ≤ 20 KB each). Served the
// usual way, each would hold net/http's connection goroutine and its buffers,
// its background reader, and the SDK's per-request session with its own
// goroutines: about 110 KB a call. So a call that must wait takes over its
// connection (http.Hijacker), starts its event stream, and parks. A parked
// call is a small struct, a timer, a watch on its ask (app's Expectation,
// driven by the Call), and a watch on its connection for the client going
// away (on Linux one epoll set for all calls, else a goroutine reading it;
// see hangup.go). Whatever wakes it (the answer, the timer, the client
// leaving, the server stopping) schedules one short-lived goroutine that
// looks at the ask and, when the wait is over, sends the result and closes
// the Stream, and with it the connection (the response says Connection:
// close).
//
// A hijacked connection's response bypasses net/http, and so the access
// log's view of it: this package alone writes its bytes, and tells the
// request's access line (response.AccessLine) that it took the connection
// over, and the status it sent when the stream ends.
//
// What the messages say (JSON-RPC, MCP) is the caller's (internal/mcpserver):
// this package knows HTTP/1 and server-sent events, nothing of MCP.
package parked

import (
	"context"
	"net/http"
	"time"

	"github.com/askd-dev/askd/internal/response"
)

// Call is a parked call's owner: what it waits for, and what it sends.
type Call interface {
	// Start lets the call run, now that its stream is open: it sends its
	// messages on s, and closes s when it is over. The stream's header may
	// not have reached the client: Gone has been called then.
	Start(s *Stream)
	// Gone says the client went away; it may come before Start.
	Gone()
	// Shutdown says the server is stopping: the call should end now.
	Shutdown()
}

// Park parks c on w's connection, and returns true once the handler may
// return; false, with nothing written, if the lot is closed (the server is
// stopping), and the caller answers the call itself.
//
// Nothing may be left in net/http's buffers: the request's body must have
// been read in full (a client sends no next request on this connection
// before its response). Where the connection cannot be taken over (not
// HTTP/1, or a wrapper without Unwrap), the call waits on the handler's
// goroutine instead, streaming through w, and Park returns when the stream
// is closed.
func (l *Lot) Park(w http.ResponseWriter, r *http.Request, c Call) bool {
	if !l.add(c) {
		return false
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s := &Stream{lot: l, call: c, w: w, done: make(chan struct{})}
		stop := context.AfterFunc(r.Context(), c.Gone)
		defer stop()
		s.start()
		<-s.done
		return true
	}
	_ = conn.SetReadDeadline(time.Time{})
	line := response.AccessLineOf(r.Context())
	if line != nil {
		line.Hijacked()
	}
	// Watched before the stream starts: a client gone already ends the call
	// at its first step.
	s := &Stream{lot: l, call: c, conn: conn, line: line, unwatch: clientsLeaving.watch(conn, c.Gone)}
	s.start()
	return true
}
