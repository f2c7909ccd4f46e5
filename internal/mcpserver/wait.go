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

// block drives the app's wait for w on the SDK handler's goroutine (in-memory
// and stdio sessions), sending notifications/progress every interval if the
// call carries a progress token, and returns its finished outcome. If the
// client cancels the call (the handler's context ends), the app cuts the ask
// off: it stays pending, to be told.
func (t *tools) block(ctx context.Context, req *mcp.CallToolRequest, c askd.Caller, w *wait) (*askd.Ask, error) {
	aw := t.await(c, w, nil)
	defer aw.Stop()
	token := req.Params.GetProgressToken()
	var sent float64
	for {
		var tick time.Time
		if token != nil {
			tick = time.Now().Add(t.interval)
		}
		a, done, err := aw.Wait(ctx, tick)
		if done {
			return aw.FinishBeside(context.WithoutCancel(ctx), a, err)
		}
		sent++
		err = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      sent,
			Message:       progressMessage(w.ask),
		})
		if err != nil {
			t.log.Debug("progress notification", "id", w.ask, "err", err)
		}
	}
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
