package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWaitsSurviveTerminatedConnections blocks 20 ask_user_question calls on
// an agent process and, three times, terminates every connection the agent
// and inbox processes hold to the database (pools and LISTEN connections)
// while a person answers a batch of the asks on the inbox process. Every call
// must return its answer: a connection cut under a waiting call is the
// database being briefly away, not the end of the wait.
func TestWaitsSurviveTerminatedConnections(t *testing.T) {
	const calls = 20
	srv := pgtest.Shared(t)
	db := srv.NewDatabase(t)
	cfg, err := pgx.ParseConfig(db)
	if err != nil {
		t.Fatal(err)
	}
	agentTok := token(t, db, "agent", "agent-1")
	humanTok := token(t, db, "human", "person-1")
	agent := serve(t, "agent", "agent", db)
	inbox := serve(t, "inbox", "inbox", db)
	people := client.New(inbox.URL, humanTok)
	readyz(t, agent, "agent", http.StatusOK)
	readyz(t, inbox, "inbox", http.StatusOK)

	results, ids := waiters(t, agent, people, agentTok, "hiccup", calls)

	var failed []string
	got := 0
	// check takes waiter i's result and notes whether it carries its answer.
	check := func(i int, r result) {
		got++
		if msg := outcome(r, i); msg != "" {
			failed = append(failed, fmt.Sprintf("waiter %d (ask %d): %s", i, ids[i], msg))
		}
	}
	collected := make([]bool, calls)
	// collectEnded takes the results of calls that already returned, answered
	// or not: a call cut off by the database shows up here.
	collectEnded := func() {
		for i, ch := range results {
			if collected[i] {
				continue
			}
			select {
			case r := <-ch:
				collected[i] = true
				check(i, r)
			default:
			}
		}
	}

	const rounds = 3
	batch := (calls + rounds - 1) / rounds
	for round := range rounds {
		lo, hi := round*batch, min((round+1)*batch, calls)
		start := time.Now()
		all, listeners := terminateAskd(t, srv, cfg.Database)
		if listeners != 2 {
			t.Fatalf("round %d: terminated %d connections, %d of them LISTEN connections: want both processes' listeners", round+1, all, listeners)
		}
		// The answers go in while both processes reconnect.
		refused := 0
		for i := lo; i < hi; i++ {
			refused += answerOne(t, people, ids[i], i)
		}
		answered := time.Since(start)
		timeout := time.After(20 * time.Second)
		for i := lo; i < hi; i++ {
			if collected[i] {
				continue
			}
			select {
			case r := <-results[i]:
				collected[i] = true
				check(i, r)
			case <-timeout:
				t.Fatalf("round %d: waiter %d was not released", round+1, i)
			}
		}
		t.Logf("round %d: terminated %d connections (%d listening); %d answers given %v after the cut (%d tries refused as unavailable), all returned after %v",
			round+1, all, listeners, hi-lo, answered.Round(time.Millisecond), refused, time.Since(start).Round(time.Millisecond))
		collectEnded()
		// The next cut comes once both processes listen again, with the
		// pools' connections fresh from this round's reads and writes.
		readyz(t, agent, "agent", http.StatusOK)
		readyz(t, inbox, "inbox", http.StatusOK)
	}
	collectEnded()
	if got != calls {
		t.Fatalf("%d of %d calls returned", got, calls)
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d calls did not return their answer:\n%s", len(failed), calls, strings.Join(failed, "\n"))
	}
}

// terminateAskd ends every session on database name but the caller's own
// (pg_terminate_backend, waiting for each to be gone), and says how many it
// ended and how many of them were LISTEN connections.
func terminateAskd(t *testing.T, srv *pgtest.Server, name string) (all, listeners int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The sessions are chosen first: in one WHERE the planner may call
	// pg_terminate_backend before it filters by database.
	err = conn.QueryRow(ctx, `
		WITH askd AS MATERIALIZED (
			SELECT pid, application_name FROM pg_stat_activity
			WHERE datname = $1 AND pid <> pg_backend_pid())
		SELECT count(*), count(*) FILTER (WHERE application_name = $2)
		FROM askd WHERE pg_terminate_backend(pid, 5000)`,
		name, postgres.ListenApplicationName).Scan(&all, &listeners)
	if err != nil {
		t.Fatalf("terminate the askd processes' connections: %v", err)
	}
	return all, listeners
}

// answerOne answers waiter i's ask with colours[i%3] on the inbox, retrying
// while the inbox says the database is unavailable (its connections were cut
// too), and says how many tries were refused so.
func answerOne(t *testing.T, people *client.Client, id int64, i int) (refused int) {
	t.Helper()
	ans := &askd.Answer{Answers: map[string]askd.Choice{fmt.Sprintf("Colour %d?", i): {Values: []string{colours[i%3]}}}}
	testserver.Eventually(t, fmt.Sprintf("ask %d answered", id), func() bool {
		_, err := people.Answer(t.Context(), id, ans)
		if askd.ErrorCode(err) == askd.EUNAVAILABLE {
			refused++
			return false
		}
		if err != nil {
			t.Fatalf("answer ask %d: %v", id, err)
		}
		return true
	})
	return refused
}

// outcome is "" when r is waiter i's answer, or else says what r is.
func outcome(r result, i int) string {
	if r.err != nil {
		return "call failed: " + r.err.Error()
	}
	if len(r.res.Content) == 0 {
		return "a result without content"
	}
	tc, ok := r.res.Content[0].(*mcp.TextContent)
	if !ok {
		return fmt.Sprintf("content %T", r.res.Content[0])
	}
	if r.res.IsError {
		return "tool error: " + tc.Text
	}
	var out struct {
		Answers map[string]any `json:"answers"`
	}
	if err := json.Unmarshal([]byte(tc.Text), &out); err != nil {
		return fmt.Sprintf("result %q: %v", tc.Text, err)
	}
	if q := fmt.Sprintf("Colour %d?", i); out.Answers[q] != colours[i%3] {
		return fmt.Sprintf("answers %v, want %s", out.Answers, colours[i%3])
	}
	return ""
}
