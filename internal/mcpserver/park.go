package mcpserver

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// # Parked calls
//
// A tool call that waits for a person may wait minutes, and thousands may
// wait at once (SPEC §8: 10,000 blocked calls at ≤ 20 KB each). Served the
// usual way, each would hold net/http's connection goroutine and its buffers,
// its background reader, and the SDK's per-request session with its own
// goroutines: about 110 KB a call. So askd runs tools/call over streamable
// HTTP itself: a call with an answer at once is answered in the handler; a
// call that must wait takes over its connection (http.Hijacker), starts its
// event stream, and parks. A parked call is a small struct, a timer, a watch
// on its ask, and a watch on its connection for the client going away (on
// Linux one epoll set for all calls, else a goroutine reading it; see
// hangup.go). Whatever wakes it (the answer, the
// timer, the client leaving, the server stopping) schedules one short-lived
// goroutine that looks at the ask and, when the wait is over, writes the
// result and closes the connection (the response says Connection: close).

// serveCall runs one tools/call over streamable HTTP: f's result at once as
// application/json, or, if the call waits, its result (and progress
// notifications) as a text/event-stream. id names an old-revision client's
// call, nil for others. The wait itself is app's (Service.Expect): a parked
// call only carries its outcome to the wire.
func (t *tools) serveCall(w http.ResponseWriter, r *http.Request, c askd.Caller, rpc *jsonrpcRequest, f toolFunc, id *callID) {
	ctx := app.WithCaller(context.Background(), c)
	res, wt := f(r.Context(), c, rpc.call)
	if wt == nil {
		writeResult(w, rpc, res)
		return
	}
	rpc.call = call{} // the arguments are done with: a parked call keeps only what it needs
	p := &parked{t: t, rpc: rpc, w: wt}
	aw := wt.Wait
	if id != nil {
		aw.Call = &app.CallRef{MCPSession: id.mcpSession, Request: id.request}
	}
	if rpc.progress != nil {
		aw.Progress = t.interval
	}
	p.e = t.svc.Expect(ctx, c, aw, app.Handlers{Progress: p.progress, Done: p.done})
	a, err, over := p.e.Now()
	if over {
		if errors.Is(err, app.ErrCallCancelled) {
			writeNoResult(w)
			return
		}
		writeResult(w, rpc, wt.done(a, err))
		return
	}
	if !t.parking.add(p) {
		writeResult(w, rpc, wt.done(p.e.Close()))
		return
	}
	// Nothing is left in net/http's buffers: the body was read in full, and
	// a client sends no next request on this connection before its response.
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not HTTP/1 (or a wrapper that cannot give up its connection): wait
		// on the handler's goroutine, streaming through the ResponseWriter.
		s := &writerStream{w: w, done: make(chan struct{})}
		p.stream = s
		stop := context.AfterFunc(r.Context(), p.e.Gone)
		defer stop()
		p.start()
		<-s.done
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	// Watched before the stream starts: a client gone already ends the call
	// at its first step.
	p.stream = &connStream{conn: conn, unwatch: clientsLeaving.watch(conn, p.e.Gone)}
	p.start()
}

// parked is one waiting tools/call: its stream, and app's expectation of
// its outcome.
type parked struct {
	t      *tools
	rpc    *jsonrpcRequest
	w      *wait
	e      *app.Expectation
	stream stream
}

// start sends the stream's headers and lets the expectation run.
func (p *parked) start() {
	if err := p.stream.send(nil); err != nil {
		p.e.Gone()
	}
	p.e.Start()
}

// shutdown answers the call now: the server is stopping.
func (p *parked) shutdown() { p.e.Shutdown() }

// progress sends a notifications/progress; an error means the client left.
func (p *parked) progress(n float64) error {
	msg := notification("notifications/progress", mcp.ProgressNotificationParams{
		ProgressToken: p.rpc.progress,
		Progress:      n,
		Message:       progressMessage(p.w.Ask),
	})
	err := p.stream.send(msg)
	if err != nil {
		p.t.log.Debug("progress notification", "id", p.w.Ask, "err", err)
	}
	return err
}

// done sends the call's result, unless there is none to send (the client
// went away or cancelled the call), and lets the call go.
func (p *parked) done(a *askd.Ask, err error) {
	if !errors.Is(err, app.ErrCallCancelled) && !errors.Is(err, app.ErrCallerGone) {
		if err := p.stream.send(response(p.rpc, p.w.done(a, err))); err != nil {
			p.t.log.Info("tool result not delivered: the client went away", "id", p.w.Ask, "err", err)
		}
	}
	p.stream.close()
	p.t.parking.remove(p)
}
