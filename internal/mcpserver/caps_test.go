package mcpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// An agent on a 2025 revision sending notifications/cancelled for calls it
// never made gets each kept (a cancellation may overtake its call) only up
// to askd.MaxEarlyCancellations; past that, 429 naming the limit, and
// nothing more is stored.
func TestEarlyCancellationsCapped(t *testing.T) {
	srv := start(t, app.Config{})
	cancel := func(requestID int) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, requestID)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
		req.Header.Set("Askd-Session", "s1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("Mcp-Session-Id", "made-up")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	kept := func() int {
		t.Helper()
		var n int
		err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
			n, err = tx.MCPCalls.CountEarlyCancellations(t.Context(), srv.AgentName)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range askd.MaxEarlyCancellations {
		if status, body := cancel(i + 1); status >= 300 {
			t.Fatalf("cancellation %d = %d %s", i+1, status, body)
		}
	}
	if n := kept(); n != askd.MaxEarlyCancellations {
		t.Fatalf("%d cancellations kept, want %d", n, askd.MaxEarlyCancellations)
	}
	status, body := cancel(askd.MaxEarlyCancellations + 1)
	if status != http.StatusTooManyRequests || !strings.Contains(body, fmt.Sprintf("at most %d", askd.MaxEarlyCancellations)) {
		t.Errorf("cancellation %d = %d %s, want 429 naming the limit", askd.MaxEarlyCancellations+1, status, body)
	}
	if n := kept(); n != askd.MaxEarlyCancellations {
		t.Errorf("%d cancellations kept after the refusal, want %d", n, askd.MaxEarlyCancellations)
	}
	err := srv.Store.View(t.Context(), func(tx askd.Tx) error {
		_, err := tx.MCPCalls.MCPCall(t.Context(), askd.MCPCallKey{Agent: srv.AgentName, Session: "s1", MCPSession: "made-up", RequestID: fmt.Sprint(askd.MaxEarlyCancellations + 1)})
		return err
	})
	if askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Errorf("the refused cancellation: %v, want it not stored", err)
	}
}
