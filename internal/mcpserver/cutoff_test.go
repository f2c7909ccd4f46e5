package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCutOffCallLeavesAskPending: a call whose connection drops without a
// notifications/cancelled (a killed client on the 2025 revisions) leaves its
// ask pending; check_ask {} finds it, and calling again with the same
// questions re-attaches to it.
func TestCutOffCallLeavesAskPending(t *testing.T) {
	srv := start(t, app.Config{})
	session := "cutoff"
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": map[string]any{"name": "ask_user_question", "arguments": threeQuestions}})
	ctx, cut := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
	req.Header.Set("Askd-Session", session)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	a := pending(t, srv, session, 1)[0]
	cut()
	<-done
	cutOffWait(t, srv, a.ID) // the server saw the call go

	var progress progressLog
	cs := connect(t, srv, transport{name: "http-2025-11-25", version: "2025-11-25"}, session, progress.options())
	var list struct{ Asks []struct{ ID int64 } }
	structured(t, call(t, cs, "check_ask", map[string]any{}), &list)
	if len(list.Asks) != 1 || list.Asks[0].ID != a.ID {
		t.Fatalf("check_ask {} after a cut-off call: %+v", list)
	}
	params := &mcp.CallToolParams{Name: "ask_user_question", Arguments: threeQuestions}
	params.SetProgressToken("again")
	ch := callAsync(context.Background(), cs, params)
	progress.waiting(t, "again") // the call asking again waits
	if asks := pending(t, srv, session, 1); len(asks) != 1 || asks[0].ID != a.ID {
		t.Fatalf("the retry made a second ask: %+v", asks)
	}
	answer(t, srv, a.ID, &askd.Answer{Response: "skip these for now"})
	var out questionOut
	structured(t, await(t, ch), &out)
	if out.Response != "skip these for now" {
		t.Fatalf("re-attached call got %+v", out)
	}
}

// TestOldRevisionsGetASessionID: clients of the 2025 revisions get an
// Mcp-Session-Id at initialize, which routes their notifications/cancelled.
func TestOldRevisionsGetASessionID(t *testing.T) {
	srv := start(t, app.Config{})
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		cs := connect(t, srv, transport{name: v, version: v}, "sid", nil)
		if cs.ID() == "" {
			t.Errorf("%s: no session id", v)
		}
	}
}
