package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/askd-dev/askd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// block waits for w's outcome on the SDK handler's goroutine (in-memory and
// stdio sessions), sending notifications/progress every interval if the
// call carries a progress token. If the client cancels the call (the
// handler's context ends), the app cuts the ask off: it stays pending, to be
// told.
func (t *tools) block(ctx context.Context, req *mcp.CallToolRequest, c askd.Caller, w *wait) (*askd.Ask, error) {
	token := req.Params.GetProgressToken()
	aw := w.Wait
	if token != nil {
		aw.Progress = t.interval
	}
	return t.svc.AwaitOutcome(ctx, c, aw, func(n float64) {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      n,
			Message:       progressMessage(w.Ask),
		})
		if err != nil {
			t.log.Debug("progress notification", "id", w.Ask, "err", err)
		}
	})
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
