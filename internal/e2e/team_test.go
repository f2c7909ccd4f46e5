package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// askdCLI runs the real binary's command on the database and returns its
// standard output.
func askdCLI(t *testing.T, db string, args ...string) string {
	t.Helper()
	return testserver.Output(t, append(args, "--db", db)...)
}

// secretOf is the token in `askd token create --json`'s output.
func secretOf(t *testing.T, out string) string {
	t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.Token == "" {
		t.Fatalf("token create printed %q: %v", out, err)
	}
	return tok.Token
}

// topics is a fake ntfy server on loopback, counting what each topic got.
type topics struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]int
}

func newTopics(t *testing.T) *topics {
	tp := &topics{got: map[string]int{}}
	tp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp.mu.Lock()
		tp.got[strings.TrimPrefix(r.URL.Path, "/")]++
		tp.mu.Unlock()
	}))
	t.Cleanup(tp.Close)
	return tp
}

func (tp *topics) count(topic string) int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.got[topic]
}

// TestTeamSplit: a team's inbox on PostgreSQL's split roles, with the real
// binary: people, roles, a team and owners made with the CLI; an ask made
// on the agent side is on its team member's Mine on either inbox process
// and not on another person's; each person's own ntfy topic hears only of
// asks routed to them; a viewer's answer is refused and changes nothing;
// two people taking the same ask on two inbox processes at once: one gets
// it; escalation happens once, by whichever inbox process sweeps first, and
// not again when one of them restarts.
func TestTeamSplit(t *testing.T) {
	db := pgtest.URL(t)
	askdCLI(t, db, "migrate")
	secret := map[string]string{}
	for _, p := range []struct{ name, role string }{{"carol", "admin"}, {"dave", "approver"}, {"frank", "approver"}, {"erin", "viewer"}} {
		secret[p.name] = secretOf(t, askdCLI(t, db, "token", "create", "--human", p.name, "--role", p.role, "--json"))
	}
	askdCLI(t, db, "team", "create", "ops", "--escalate-after", "1s", "--escalate-to", "carol")
	askdCLI(t, db, "team", "add", "ops", "dave", "erin")
	agentTok := secretOf(t, askdCLI(t, db, "token", "create", "--agent", "deployer", "--owner", "team:ops", "--json"))
	if list := askdCLI(t, db, "token", "list"); !strings.Contains(list, "team:ops") || !strings.Contains(list, "viewer") {
		t.Fatalf("token list:\n%s", list)
	}

	ntfy := newTopics(t)
	allow := []string{"--webhook-allow", "127.0.0.1"}
	agent := serve(t, "agent", "agent", db, allow...)
	inboxA := serve(t, "inbox A", "inbox", db, allow...)
	inboxB := serve(t, "inbox B", "inbox", db, allow...)
	ctx := t.Context()
	person := func(name string, p *proc) *client.Client { return client.New(p.URL, secret[name]) }
	for _, name := range []string{"carol", "dave", "frank"} {
		if _, err := person(name, inboxA).SetMyNotify(ctx, askd.PersonNotify{Ntfy: ntfy.URL + "/" + name}); err != nil {
			t.Fatalf("%s's notify: %v", name, err)
		}
	}

	asker := client.New(agent.URL, agentTok)
	asker.Session = "deploys"
	a, err := asker.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Run the migration"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Owner != "team:ops" {
		t.Fatalf("ask routed to %q", a.Owner)
	}
	mine := func(name string, p *proc) bool {
		asks, err := person(name, p).List(ctx, client.ListOptions{Status: askd.StatusPending, Mine: true})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(asks, func(x *askd.Ask) bool { return x.ID == a.ID })
	}
	if !mine("dave", inboxB) || mine("frank", inboxA) {
		t.Fatalf("Mine: dave's has it %v (want true), frank's %v (want false)", mine("dave", inboxB), mine("frank", inboxA))
	}
	testserver.Eventually(t, "dave's topic notified", func() bool { return ntfy.count("dave") == 1 })

	// A viewer's answer: refused naming the role, and nothing stored.
	_, err = person("erin", inboxA).Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if askd.ErrorCode(err) != askd.EFORBIDDEN || !strings.Contains(err.Error(), "needs the approver role") {
		t.Fatalf("viewer's answer: %v", err)
	}
	got, err := person("carol", inboxB).Show(ctx, a.ID)
	if err != nil || !got.Pending() || got.Answer != nil || len(got.History) != 1 {
		t.Fatalf("after the viewer's answer: %+v, %v", got, err)
	}

	// Escalation: once, though both inbox processes sweep each second.
	testserver.Eventually(t, "the ask escalated", func() bool {
		got, err := person("carol", inboxA).Show(ctx, a.ID)
		return err == nil && got.EscalatedTo == "carol"
	})
	testserver.Eventually(t, "carol's topic notified of the escalation", func() bool { return ntfy.count("carol") == 1 })
	inboxB.cmd.Process.Kill() // a crash and a restart: nothing is escalated again
	inboxB.cmd.Wait()
	inboxB = serve(t, "inbox B again", "inbox", db, allow...)
	b, err := asker.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "A second one"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the second ask escalated", func() bool {
		got, err := person("carol", inboxB).Show(ctx, b.ID)
		return err == nil && got.EscalatedTo == "carol"
	})
	got, err = person("carol", inboxB).Show(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := countActions(got.History, askd.ActionEscalated); n != 1 {
		t.Fatalf("the first ask escalated %d times, want once", n)
	}
	if mine("frank", inboxA) {
		t.Fatal("an ask escalated to carol is on frank's Mine")
	}

	// Two people take the second ask at once, on two processes: one gets it.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, p := range []struct {
		name string
		on   *proc
	}{{"dave", inboxA}, {"frank", inboxB}} {
		wg.Go(func() { _, errs[i] = person(p.name, p.on).Claim(context.Background(), b.ID) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case askd.ErrorCode(err) != askd.ECONFLICT || !strings.Contains(err.Error(), "claimed by"):
			t.Fatalf("the losing claim: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims won, want 1 (%v)", won, errs)
	}
	got, err = person("carol", inboxA).Show(ctx, b.ID)
	if err != nil || got.ClaimedBy == "" || countActions(got.History, askd.ActionClaimed) != 1 {
		t.Fatalf("after the race: claimed by %q, %v", got.ClaimedBy, err)
	}
	if ntfy.count("frank") != 0 {
		t.Errorf("frank, of no team, was notified %d times", ntfy.count("frank"))
	}
}

func countActions(h []*askd.Event, action string) int {
	n := 0
	for _, e := range h {
		if e.Action == action {
			n++
		}
	}
	return n
}
