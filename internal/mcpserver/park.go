package mcpserver

import (
	"context"
	"errors"
	"net/http"
	"sync"
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
// call, nil for others.
func (t *tools) serveCall(w http.ResponseWriter, r *http.Request, c askd.Caller, rpc *jsonrpcRequest, f toolFunc, id *callID) {
	ctx := app.WithCaller(context.Background(), c)
	res, wt := f(r.Context(), c, rpc.call)
	if wt == nil {
		writeResult(w, rpc, res)
		return
	}
	rpc.call = call{} // the arguments are done with: a parked call keeps only what it needs
	// Until start, wake-ups only mark that something happened.
	p := &parked{t: t, c: c, ctx: ctx, rpc: rpc, w: wt, running: true}
	// Before the first look: no change is missed. A revoked token kicks too,
	// and the next look fails with "token revoked".
	p.aw = t.await(c, wt, p.kick)
	if id != nil && wt.mode != app.AwaitCheck {
		// Kept in the store, so a cancellation reaching another process finds it.
		if err := p.aw.Track(ctx, id.mcpSession, id.request); err != nil {
			t.log.Warn("record MCP call", "id", wt.ask, "err", err)
		}
	}
	a, wake, done, err := p.aw.Look(ctx)
	if done {
		p.aw.Stop()
		if errors.Is(err, app.ErrCallCancelled) {
			writeNoResult(w)
			return
		}
		writeResult(w, rpc, wt.done(p.aw.FinishBeside(ctx, a, err)))
		return
	}
	if !t.parking.add(p) {
		p.aw.Stop()
		writeResult(w, rpc, wt.done(p.aw.FinishBeside(ctx, a, app.ShuttingDown(wt.ask))))
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
		stop := context.AfterFunc(r.Context(), p.gone)
		defer stop()
		p.start(wake)
		<-s.done
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	// Watched before the stream starts: a client gone already ends the call
	// at its first step (start runs it).
	p.stream = &connStream{conn: conn, unwatch: clientsLeaving.watch(conn, p.gone)}
	p.start(wake)
}

// parked is one waiting tools/call; see the comment at the top of the file.
type parked struct {
	t      *tools
	c      askd.Caller
	ctx    context.Context // carries the caller, and no request's cancellation
	rpc    *jsonrpcRequest
	w      *wait
	aw     *app.Await
	stream stream

	mu       sync.Mutex
	timer    *time.Timer
	progress time.Time // when the next progress notification is due
	sent     float64   // progress notifications sent
	running  bool      // a step is scheduled or running
	again    bool      // something happened while it ran: look once more
	left     bool      // the client went away
	stopping bool      // the server is shutting down
	over     bool      // the call has ended
}

// start sends the stream's headers, sets the call's timer, and from then on
// lets wake-ups run steps, taking one at once if any came meanwhile.
func (p *parked) start(wake time.Time) {
	err := p.stream.send(nil)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rpc.progress != nil {
		p.progress = time.Now().Add(p.t.interval)
	}
	p.timer = time.AfterFunc(p.next(wake), p.kick)
	if err != nil {
		p.left = true
		p.again = true
	}
	if p.again {
		go p.run()
		return
	}
	p.running = false
}

// next is how long until the call must look again, at wake or when progress
// is due.
func (p *parked) next(wake time.Time) time.Duration {
	if !p.progress.IsZero() && p.progress.Before(wake) {
		wake = p.progress
	}
	return time.Until(wake)
}

// kick schedules a look at the call; it never blocks, so the hub may call it.
func (p *parked) kick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over {
		return
	}
	if p.running {
		p.again = true
		return
	}
	p.running = true
	go p.run()
}

// gone records that the client went away.
func (p *parked) gone() {
	p.mu.Lock()
	p.left = true
	p.mu.Unlock()
	p.kick()
}

// shutdown records that the server is stopping.
func (p *parked) shutdown() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	p.kick()
}

// run looks at the call until nothing new has happened.
func (p *parked) run() {
	for {
		p.mu.Lock()
		left, stopping := p.left, p.stopping
		p.again = false
		p.mu.Unlock()
		if p.step(left, stopping) {
			return
		}
		p.mu.Lock()
		if !p.again {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}

// step is one look; it reports whether the call ended.
func (p *parked) step(left, stopping bool) bool {
	t, id := p.t, p.w.ask
	switch {
	case left:
		// The client went away: on 2026-07-28 closing the stream is the
		// cancellation; on older revisions a dropped connection is a
		// cut-off too (SPEC §2.1). The ask stays pending, to be told, and
		// asking again re-attaches to it.
		p.aw.CutOff(p.ctx)
		p.end(nil)
		return true
	case stopping:
		p.end(p.w.done(p.aw.FinishBeside(p.ctx, nil, app.ShuttingDown(id))).ptr())
		return true
	}
	a, wake, done, err := p.aw.Look(p.ctx)
	if errors.Is(err, app.ErrCallCancelled) {
		p.end(nil) // cancelled with notifications/cancelled: no response (SPEC §2.1)
		return true
	}
	if done {
		p.end(p.w.done(p.aw.FinishBeside(p.ctx, a, err)).ptr())
		return true
	}
	p.mu.Lock()
	due := !p.progress.IsZero() && !time.Now().Before(p.progress)
	if due {
		p.sent++
		p.progress = time.Now().Add(t.interval)
	}
	sent := p.sent
	p.timer.Reset(p.next(wake))
	p.mu.Unlock()
	if due {
		msg := notification("notifications/progress", mcp.ProgressNotificationParams{
			ProgressToken: p.rpc.progress,
			Progress:      sent,
			Message:       progressMessage(id),
		})
		if err := p.stream.send(msg); err != nil {
			t.log.Debug("progress notification", "id", id, "err", err)
			p.gone()
		}
	}
	return false
}

// end sends the call's result, if it has one, and lets the call go.
func (p *parked) end(res *result) {
	p.mu.Lock()
	p.over = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	if res != nil {
		if err := p.stream.send(response(p.rpc, *res)); err != nil {
			p.t.log.Info("tool result not delivered: the client went away", "id", p.w.ask, "err", err)
		}
	}
	p.stream.close()
	p.release()
	p.t.parking.remove(p)
}

// release ends the app's wait: it stops watching the ask and forgets the
// recorded call.
func (p *parked) release() { p.aw.Stop() }

func (r result) ptr() *result { return &r }
