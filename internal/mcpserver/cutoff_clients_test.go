package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientTimeout is how long the clients of these tests wait for a blocking
// call before giving up on it, as real clients do on their own timers (the
// TypeScript SDK after 60 s by default).
const clientTimeout = 1500 * time.Millisecond

// oneQuestion is ask_user_question's arguments for one single-select question.
func oneQuestion(question, header string, labels ...string) map[string]any {
	var opts []map[string]any
	for _, l := range labels {
		opts = append(opts, map[string]any{"label": l})
	}
	return map[string]any{"questions": []map[string]any{
		{"question": question, "header": header, "multiSelect": false, "options": opts}}}
}

// TestCutOffByClientTimeout: the go-sdk client gives up on a blocking
// ask_user_question (a context deadline on CallTool), on HTTP at the newest
// revision and at 2025-11-25, and over stdio through askd mcp. The ask stays
// pending (SPEC §2.1); the person answers it; the same questions called again
// return that answer from the same ask. A second question cut off the same
// way and never called again is told at the Stop hook, once.
func TestCutOffByClientTimeout(t *testing.T) {
	srv := start(t, app.Config{})
	for _, tr := range []transport{
		{name: "http-newest"},
		{name: "http-2025-11-25", version: "2025-11-25"},
		{name: "stdio-bridge", stdio: true},
	} {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			session := "timeout-" + tr.name
			cs := connect(t, srv, tr, session, nil)
			database := oneQuestion("Which database?", "Database", "SQLite", "Postgres")

			a := giveUp(t, srv, cs, session, database)
			answer(t, srv, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which database?": {Values: []string{"Postgres"}}}})
			var out questionOut
			structured(t, call(t, cs, "ask_user_question", database), &out)
			if out.Answers["Which database?"] != "Postgres" {
				t.Fatalf("called again after the answer: %+v, want Postgres", out)
			}
			reattached(t, srv, session, a.ID)

			region := oneQuestion("Which region?", "Region", "Europe", "America")
			b := giveUp(t, srv, cs, session, region)
			answer(t, srv, b.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which region?": {Values: []string{"Europe"}}}})
			toldAtStop(t, srv, session, b.ID, "Europe", "Which database?")
		})
	}
}

// giveUp calls ask_user_question with a client timeout, checks that the call
// failed with it, and returns its ask once the server has the call as cut
// off (pending, to be told).
func giveUp(t *testing.T, srv *testserver.Server, cs *mcp.ClientSession, session string, args map[string]any) *askd.Ask {
	t.Helper()
	before := len(pending(t, srv, session, 0))
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	ch := callAsync(ctx, cs, &mcp.CallToolParams{Name: "ask_user_question", Arguments: args})
	a := pending(t, srv, session, before+1)[0]
	select {
	case o := <-ch:
		if !errors.Is(o.err, context.DeadlineExceeded) {
			t.Fatalf("a call past its client timeout: %v, %v; want the deadline exceeded", o.res, o.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call outlived its client timeout")
	}
	return cutOffWait(t, srv, a.ID)
}

// reattached checks that calling again made no second ask for id's
// questions, and that id is answered and told.
func reattached(t *testing.T, srv *testserver.Server, session string, id int64) {
	t.Helper()
	// The client may have gone on to its next, other question already: only
	// asks of the same questions count.
	asks := sessionAsks(t, srv, session)
	var a *askd.Ask
	for _, x := range asks {
		if x.ID == id {
			a = x
		}
	}
	same := 0
	for _, x := range asks {
		if a != nil && len(x.Questions) > 0 && len(a.Questions) > 0 && x.Questions[0].Question == a.Questions[0].Question {
			same++
		}
	}
	if a == nil || same != 1 || a.Status != askd.StatusAnswered {
		t.Fatalf("session %s after calling again: %s, want ask %d alone for its questions, answered", session, describe(asks), id)
	}
	// The told record follows the call's reply (app.Await.FinishBeside).
	testserver.Eventually(t, fmt.Sprintf("ask %d told after the call that returned its answer", id), func() bool {
		got, err := srv.Human().Show(context.Background(), id)
		return err == nil && got.ToldAt != nil
	})
}

// toldAtStop checks that session's Stop hook tells of ask id (its answer
// want, and nothing of notWant, already told), and that the next Stop has
// nothing left to tell.
func toldAtStop(t *testing.T, srv *testserver.Server, session string, id int64, want, notWant string) {
	t.Helper()
	out := stopHook(t, srv, session)
	reason, _ := out["reason"].(string)
	if out["decision"] != "block" || !strings.Contains(reason, want) || strings.Contains(reason, notWant) {
		t.Fatalf("Stop after a cut-off ask was answered: %v; want a block whose reason has %q and not %q", out, want, notWant)
	}
	if got, err := srv.Human().Show(context.Background(), id); err != nil || got.ToldAt == nil {
		t.Fatalf("ask %d after the Stop hook told it: told at %v (%v)", id, got.ToldAt, err)
	}
	if out := stopHook(t, srv, session); len(out) != 0 {
		t.Fatalf("the next Stop: %v, want {} (told once)", out)
	}
}

// stopHook posts Claude Code's Stop hook for session, as its http hook does
// (the agent token, the session as session_id), and returns the reply.
func stopHook(t *testing.T, srv *testserver.Server, session string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"hook_event_name": "Stop", "session_id": session, "stop_hook_active": false})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks/claude", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Stop hook: %s, %v", resp.Status, err)
	}
	return out
}

// sessionAsks is every ask of session, in any state.
func sessionAsks(t *testing.T, srv *testserver.Server, session string) []*askd.Ask {
	t.Helper()
	var all []*askd.Ask
	for _, st := range []askd.Status{askd.StatusPending, askd.StatusAnswered, askd.StatusCancelled} {
		asks, err := srv.Human().List(context.Background(), client.ListOptions{Session: session, Status: st})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, asks...)
	}
	return all
}

// describe is asks as id/status pairs, for failure messages.
func describe(asks []*askd.Ask) string {
	var parts []string
	for _, a := range asks {
		parts = append(parts, fmt.Sprintf("#%d %s", a.ID, a.Status))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
