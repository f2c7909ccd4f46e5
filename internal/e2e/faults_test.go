package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/testserver"
)

var colours = []string{"red", "green", "blue"}

// waiters blocks n ask_user_question calls on the agent process, each in a
// session of its own, and returns their results' channels and ask ids once
// the inbox lists them and the calls wait.
func waiters(t *testing.T, agent *proc, people *client.Client, agentTok, prefix string, n int) ([]<-chan result, []int64) {
	t.Helper()
	var calls []<-chan result
	var ids []int64
	for i := range n {
		session := fmt.Sprintf("%s-%d", prefix, i)
		cs := connect(t, agent.URL+"/mcp", agentTok, session, "")
		calls = append(calls, callAsync(t.Context(), cs, "ask_user_question", questionArgs(fmt.Sprintf("Colour %d?", i))))
		ids = append(ids, pendingIn(t, people, session, 1)[0])
	}
	// An ask the inbox lists may still have its creation's reply on the
	// way to the agent process: a fault then fails the create, and the call
	// ends with "the database is unavailable" (asking again finds the ask).
	// The tests are about calls that wait; the process's askd_waiters
	// gauge counts them once their creation has returned.
	testserver.Eventually(t, fmt.Sprintf("%d calls waiting in the agent process", n), func() bool {
		return waitersIn(t, agent) >= n
	})
	return calls, ids
}

// waitersIn is the process's askd_waiters gauge: the calls waiting in it.
func waitersIn(t *testing.T, p *proc) int {
	t.Helper()
	v := testserver.Metric(t, p.URL, "askd_waiters")
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("askd_waiters %q on %s/metrics: %v", v, p.URL, err)
	}
	return int(n)
}

// answerAll answers ask i with colours[i%3], retrying while the inbox says
// the database is unavailable.
func answerAll(t *testing.T, people *client.Client, ids []int64) {
	t.Helper()
	for i, id := range ids {
		ans := &askd.Answer{Answers: map[string]askd.Choice{fmt.Sprintf("Colour %d?", i): {Values: []string{colours[i%3]}}}}
		testserver.Eventually(t, fmt.Sprintf("ask %d answered", id), func() bool {
			_, err := people.Answer(t.Context(), id, ans)
			if err != nil && askd.ErrorCode(err) != askd.EUNAVAILABLE {
				t.Fatalf("answer ask %d: %v", id, err)
			}
			return err == nil
		})
	}
}

// released checks that every waiter returns, within d, the answer answerAll gave it.
func released(t *testing.T, calls []<-chan result, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for i, ch := range calls {
		select {
		case r := <-ch:
			q := fmt.Sprintf("Colour %d?", i)
			if a := answers(t, r); a[q] != colours[i%3] {
				t.Errorf("waiter %d returned %v, want %s", i, a, colours[i%3])
			}
		case <-timeout:
			t.Fatalf("waiter %d was not released", i)
		}
	}
}

// readyz waits for the process's /readyz to answer want.
func readyz(t *testing.T, p *proc, name string, want int) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("%s /readyz %d", name, want), func() bool { return p.ready() == want })
}

// admin runs SQL as the superuser of the cluster.
func admin(t *testing.T, srv *pgtest.Server, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// TestListenerTerminated cuts the agent process's LISTEN connection with
// pg_terminate_backend and keeps it from coming back while the answers are
// given: no waiter can hear of them then, and every waiter still returns the
// right answer once the listener is back.
func TestListenerTerminated(t *testing.T) {
	srv := pgtest.New(t)
	db := srv.NewDatabase(t)
	// A role per side, so the agent's listener can be told apart and kept
	// out (NOLOGIN) while the inbox goes on writing.
	admin(t, srv, "CREATE ROLE askd_agent LOGIN SUPERUSER")
	admin(t, srv, "CREATE ROLE askd_inbox LOGIN SUPERUSER")
	agentTok := token(t, db, "agent", "agent-1")
	humanTok := token(t, db, "human", "alice")
	agent := serve(t, "agent", "agent", withUser(t, db, "askd_agent"))
	inbox := serve(t, "inbox", "inbox", withUser(t, db, "askd_inbox"))
	people := client.New(inbox.URL, humanTok)

	calls, ids := waiters(t, agent, people, agentTok, "gap", 4)

	admin(t, srv, "ALTER ROLE askd_agent NOLOGIN")
	n := admin(t, srv, "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = $1 AND usename = 'askd_agent'",
		postgres.ListenApplicationName)
	if n != 1 {
		t.Fatalf("terminated %d listening connections of the agent process, want 1", n)
	}
	readyz(t, agent, "agent", http.StatusServiceUnavailable)

	answerAll(t, people, ids) // in the gap: no one hears of these
	// Kept sleep: the check is that nothing happens while the process cannot
	// hear, and no event marks "would have heard by now"; a wrong release
	// would come within this moment on an idle machine.
	time.Sleep(300 * time.Millisecond)
	for i, ch := range calls {
		select {
		case r := <-ch:
			t.Fatalf("waiter %d returned while its process could not have heard: %+v", i, r)
		default:
		}
	}

	admin(t, srv, "ALTER ROLE askd_agent LOGIN")
	released(t, calls, 15*time.Second)
	readyz(t, agent, "agent", http.StatusOK)
}

// TestPostgresRestart restarts PostgreSQL under running agent and inbox
// processes: /readyz reports the outage while it lasts, the processes recover
// by themselves, and calls blocked across the restart are released by answers
// given after it.
func TestPostgresRestart(t *testing.T) {
	srv := pgtest.New(t)
	db := srv.NewDatabase(t)
	agentTok := token(t, db, "agent", "agent-1")
	humanTok := token(t, db, "human", "alice")
	agent := serve(t, "agent", "agent", db)
	inbox := serve(t, "inbox", "inbox", db)
	people := client.New(inbox.URL, humanTok)
	readyz(t, agent, "agent", http.StatusOK)
	readyz(t, inbox, "inbox", http.StatusOK)

	calls, ids := waiters(t, agent, people, agentTok, "restart", 3)

	srv.Stop(t)
	readyz(t, agent, "agent", http.StatusServiceUnavailable)
	readyz(t, inbox, "inbox", http.StatusServiceUnavailable)
	// Kept sleep: the check is that the outage is still reported a moment
	// later (not a single failed probe), which has no event to wait for.
	time.Sleep(500 * time.Millisecond)
	if got := agent.ready(); got != http.StatusServiceUnavailable {
		t.Fatalf("agent /readyz %d while PostgreSQL is down", got)
	}
	srv.Start(t)
	readyz(t, agent, "agent", http.StatusOK)
	readyz(t, inbox, "inbox", http.StatusOK)

	answerAll(t, people, ids)
	released(t, calls, 15*time.Second)

	// And new work flows as before.
	more, moreIDs := waiters(t, agent, people, agentTok, "after", 1)
	answerAll(t, people, moreIDs)
	released(t, more, 10*time.Second)
}
