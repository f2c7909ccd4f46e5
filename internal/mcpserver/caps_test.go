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

// TestCancellationOfAnsweredCallIgnored: OpenCode sends notifications/cancelled
// after every call it completed (SPEC §18). A cancellation of a call askd
// answered, at once or after waiting, is ignored: the answered ask is not
// cut off, nothing is stored for it, and it counts toward no cap, even
// with the cap of early cancellations reached.
func TestCancellationOfAnsweredCallIgnored(t *testing.T) {
	srv := start(t, app.Config{})
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
		req.Header.Set("Askd-Session", "s1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", "opencode-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	callTool := func(id int, tool, args string) string {
		_, body := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
		return body
	}
	cancel := func(id int) int {
		status, body := post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"AbortError"}}`, id))
		if status >= 300 {
			t.Errorf("cancellation of %d = %d %s", id, status, body)
		}
		return status
	}
	kept := func() (n int) {
		t.Helper()
		err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
			n, err = tx.MCPCalls.CountEarlyCancellations(t.Context(), srv.AgentName)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Answered at once.
	if body := callTool(1, "ask", `{"kind":"ready","title":"Ready for review"}`); !strings.Contains(body, `\"status\":\"pending\"`) {
		t.Fatalf("ask: %s", body)
	}
	// Answered after waiting for the person.
	reply := make(chan string, 1)
	go func() {
		reply <- callTool(2, "ask_user_question", `{"questions":[{"question":"Which database?","header":"Database","options":[{"label":"SQLite"},{"label":"Postgres"}],"multiSelect":false}]}`)
	}()
	var q *askd.Ask
	for _, a := range pending(t, srv, "s1", 2) {
		if a.Kind == askd.KindQuestion {
			q = a
		}
	}
	answer(t, srv, q.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which database?": {Values: []string{"SQLite"}}}})
	if body := <-reply; !strings.Contains(body, "SQLite") {
		t.Fatalf("ask_user_question: %s", body)
	}
	toldWait(t, srv, q.ID) // recorded just after the reply
	before, err := srv.Human().Show(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	cancel(1)
	cancel(2)
	if n := kept(); n != 0 {
		t.Errorf("%d cancellations kept, want none", n)
	}
	after, err := srv.Human().Show(t.Context(), q.ID)
	if err != nil || len(after.History) != len(before.History) || after.Status != askd.StatusAnswered {
		t.Errorf("the answered question after its cancellation: %+v, %v; want it as it was", after, err)
	}

	// With the cap of cancellations of calls not seen reached, one of an
	// answered call is still taken, and stores nothing.
	for i := range askd.MaxEarlyCancellations {
		cancel(1000 + i)
	}
	if body := callTool(3, "check_ask", `{}`); strings.Contains(body, `"isError":true`) {
		t.Fatalf("check_ask: %s", body)
	}
	if status := cancel(3); status >= 300 {
		t.Fatalf("the cancellation of an answered call was refused at the cap")
	}
	if n := kept(); n != askd.MaxEarlyCancellations {
		t.Errorf("%d cancellations kept, want %d", n, askd.MaxEarlyCancellations)
	}
}
