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

// block waits for ask a to settle: until its own deadline when until is zero,
// else until then (returning it still pending). While it waits it sends
// notifications/progress every interval if the call carries a progress token.
//
// owns says the call created the ask: if the client cancels the call, the ask
// is withdrawn (a cancelled check_ask leaves it alone). The cancellation is
// the handler's context ending (stdio and in-memory sessions, and 2026-07-28
// clients closing the stream) or, for older revisions over HTTP, a
// notifications/cancelled that the router matches to this call.
func (t *tools) block(ctx context.Context, req *mcp.CallToolRequest, c askd.Caller, a *askd.Ask, until time.Time, owns bool) (*askd.Ask, error) {
	if id, ok := ctx.Value(callIDKey{}).(callID); ok && owns {
		// Kept in the store, so a cancellation reaching another process finds it.
		if err := t.svc.CallStarted(ctx, c, id.mcpSession, id.request, a.ID); err != nil {
			t.log.Warn("record MCP call", "id", a.ID, "err", err)
		}
		defer func() {
			if err := t.svc.CallEnded(context.WithoutCancel(ctx), c, id.mcpSession, id.request); err != nil {
				t.log.Warn("forget MCP call", "id", a.ID, "err", err)
			}
		}()
	}
	token := req.Params.GetProgressToken()
	var sent float64
	for {
		next := until
		if token != nil {
			if tick := time.Now().Add(t.interval); next.IsZero() || tick.Before(next) {
				next = tick
			}
		}
		got, err := t.svc.Wait(ctx, c, a.ID, next)
		if err != nil {
			if ctx.Err() != nil && owns {
				t.withdraw(ctx, c, a.ID, "the client cancelled the call")
			}
			return nil, err
		}
		a = got
		if !a.Pending() || !until.IsZero() && !time.Now().Before(until) {
			return a, nil
		}
		if token != nil {
			sent++
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      sent,
				Message:       fmt.Sprintf("waiting for the person to answer ask #%d", a.ID),
			})
			if err != nil {
				t.log.Debug("progress notification", "id", a.ID, "err", err)
			}
		}
	}
}

// jsonResult is a tool result carrying v both as structuredContent and as a
// text block holding the same JSON.
func jsonResult(v any, isError bool) *mcp.CallToolResult {
	b := marshal(v)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           isError,
	}
}

// errorResult is a tool error whose text is the error's caller-facing message
// (for bad input: the field path and the rule).
func errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: askd.ErrorMessage(err)}},
		IsError: true,
	}
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
