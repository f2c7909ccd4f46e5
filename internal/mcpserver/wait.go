package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// block waits on the SDK handler's goroutine for w's ask to settle, for
// w.until, or for the ask's deadline, sending notifications/progress every
// interval if the call carries a progress token. If the client cancels the
// call (the handler's context ends) and the call owns the ask, the ask is
// withdrawn.
func (t *tools) block(ctx context.Context, req *mcp.CallToolRequest, c askd.Caller, w *wait) (*askd.Ask, error) {
	token := req.Params.GetProgressToken()
	var sent float64
	for {
		next := w.until
		if token != nil {
			if tick := time.Now().Add(t.interval); next.IsZero() || tick.Before(next) {
				next = tick
			}
		}
		a, err := t.svc.Wait(ctx, c, w.ask, next)
		if err != nil {
			if ctx.Err() != nil && w.owns {
				t.withdraw(ctx, c, w.ask, "the client cancelled the call")
			}
			return nil, err
		}
		if !a.Pending() || !w.until.IsZero() && !time.Now().Before(w.until) {
			return a, nil
		}
		if token != nil {
			sent++
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      sent,
				Message:       progressMessage(w.ask),
			})
			if err != nil {
				t.log.Debug("progress notification", "id", w.ask, "err", err)
			}
		}
	}
}

// told records that the agent is being given ask a's outcome, which the
// caller returns in the call's result; a pending ask, or a wait that ended
// in err, is passed through as it is. An ask whose outcome is also queued
// for telling (a.Tell) is marked first, as Check does, so that the queued
// tell is not sent as well. Any other ask is told through this result only;
// its record is written beside the result instead of before it, which takes
// a database write off the answer's way back to the agent. If askd stops in
// between, the agent has the answer and the record says it was not told:
// check_ask gives the same outcome again, and asking the same question again
// returns it once more.
func (t *tools) told(ctx context.Context, c askd.Caller, a *askd.Ask, err error) (*askd.Ask, error) {
	if err != nil || a.Pending() {
		return a, err
	}
	if a.Tell {
		return t.svc.Checked(ctx, c, a)
	}
	go func() {
		if _, err := t.svc.Checked(context.WithoutCancel(ctx), c, a); err != nil {
			t.log.Warn("record that the agent was told", "id", a.ID, "err", err)
		}
	}()
	return a, nil
}

// progressMessage is the message of a waiting call's progress notifications.
func progressMessage(id int64) string {
	return fmt.Sprintf("waiting for the person to answer ask #%d", id)
}

// jsonResult is a tool result carrying v both as structuredContent and as a
// text block holding the same JSON.
func jsonResult(v any, isError bool) result {
	return result{text: marshal(v), structured: true, isError: isError}
}

// errorResult is a tool error whose text is the error's caller-facing message
// (for bad input: the field path and the rule).
func errorResult(err error) result {
	return result{text: []byte(askd.ErrorMessage(err)), isError: true}
}

// marshal encodes v as compact JSON without escaping <, > and &, which agents
// read back verbatim.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err)) // only askd's own types get here
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}
