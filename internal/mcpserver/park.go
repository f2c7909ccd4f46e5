package mcpserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver/parked"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveCall runs one tools/call over streamable HTTP: f's result at once as
// application/json, or, if the call waits, its result (and progress
// notifications) as a text/event-stream on a parked call (package parked:
// the connection taken over, its bytes, its access line). id names an
// old-revision client's call, nil for others. The wait itself is app's
// (Service.Expect): a parked call only carries its outcome to the wire.
func (t *tools) serveCall(w http.ResponseWriter, r *http.Request, c askd.Caller, rpc *jsonrpcRequest, f toolFunc, id *callID) {
	ctx := app.WithCaller(context.Background(), c)
	res, wt := f(r.Context(), c, rpc.call)
	if wt == nil {
		if id != nil {
			// Before the reply: the client's cancellation of the call
			// once answered (OpenCode sends one after every call) is then
			// known, and ignored (app.Service.CallCancelled).
			if err := t.svc.CallAnswered(context.WithoutCancel(r.Context()), c, id.mcpSession, id.request); err != nil {
				t.log.Warn("record an answered MCP call", "request", id.request, "err", err)
			}
		}
		writeResult(w, rpc, res)
		return
	}
	rpc.call = call{} // the arguments are done with: a parked call keeps only what it needs
	p := &parkedCall{t: t, rpc: rpc, w: wt}
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
	if !t.lot.Park(w, r, p) {
		writeResult(w, rpc, wt.done(p.e.Close()))
	}
}

// parkedCall is one waiting tools/call: app's expectation of its outcome,
// and the stream it goes out on (a parked.Call).
type parkedCall struct {
	t      *tools
	rpc    *jsonrpcRequest
	w      *wait
	e      *app.Expectation
	stream *parked.Stream
}

// Start lets the expectation run, now that the stream is open.
func (p *parkedCall) Start(s *parked.Stream) {
	p.stream = s
	p.e.Start()
}

// Gone says the client went away.
func (p *parkedCall) Gone() { p.e.Gone() }

// Shutdown answers the call now: the server is stopping.
func (p *parkedCall) Shutdown() { p.e.Shutdown() }

// progress sends a notifications/progress; an error means the client left.
func (p *parkedCall) progress(n float64) error {
	msg := notification("notifications/progress", mcp.ProgressNotificationParams{
		ProgressToken: p.rpc.progress,
		Progress:      n,
		Message:       progressMessage(p.w.Ask),
	})
	err := p.stream.Send(msg)
	if err != nil {
		p.t.log.Debug("progress notification", "id", p.w.Ask, "err", err)
	}
	return err
}

// done sends the call's result, unless there is none to send (the client
// went away or cancelled the call), and lets the call go.
func (p *parkedCall) done(a *askd.Ask, err error) {
	if !errors.Is(err, app.ErrCallCancelled) && !errors.Is(err, app.ErrCallerGone) {
		if err := p.stream.Send(response(p.rpc, p.w.done(a, err))); err != nil {
			p.t.log.Info("tool result not delivered: the client went away", "id", p.w.Ask, "err", err)
		}
	}
	p.stream.Close()
}
