package app_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/sqlite"
	"github.com/askd-dev/askd/internal/testserver"
)

// teamClock is a clock tests move by hand.
type teamClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *teamClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *teamClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// teamFixture makes, on st (through an app of its own): people carol
// (admin) and dave (approver), team ops (dave) escalating after a minute to
// carol, and an agent owned by ops; it returns the agent's secret.
func teamFixture(t *testing.T, st askd.Store) string {
	t.Helper()
	ctx := t.Context()
	admin := app.New(st, app.Config{})
	for _, p := range []app.TokenSpec{{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin}, {Name: "dave", Role: askd.RoleHuman}} {
		if _, _, err := admin.CreateToken(ctx, app.Itself, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CreateTeam(ctx, app.Itself, app.TeamInput{Name: "ops", Members: []string{"dave"}, EscalateAfter: time.Minute, EscalateTo: "carol"}); err != nil {
		t.Fatal(err)
	}
	_, secret, err := admin.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "deployer", Role: askd.RoleAgent, Owner: "team:ops"})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// escalations counts the escalated rows in ask id's history.
func escalations(t *testing.T, svc *app.Service, id int64) int {
	t.Helper()
	evs, err := svc.History(t.Context(), askd.Caller{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin}, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Action == askd.ActionEscalated {
			n++
		}
	}
	return n
}

// An ask routed to a team that nobody claims is escalated once, after the
// team's escalate_after, by whichever of two processes on one PostgreSQL
// sweeps first, however often both sweep at once; a restarted process does
// not escalate it again. Claimed, snoozed and early asks are not escalated.
func TestEscalationExactlyOnceAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	clk := &teamClock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	st1, st2 := testserver.OpenPostgres(t, url), testserver.OpenPostgres(t, url)
	secret := teamFixture(t, st1)
	p1 := app.New(st1, app.Config{Now: clk.now})
	p2 := app.New(st2, app.Config{Now: clk.now})
	ctx := t.Context()
	agent, err := p1.Authenticate(ctx, secret)
	if err != nil || agent.Owner != "team:ops" {
		t.Fatalf("agent %+v, %v", agent, err)
	}
	agent.Session = "deploys"
	dave := askd.Caller{Name: "dave", Role: askd.RoleHuman, Access: askd.AccessApprover}

	var ids []int64
	for _, title := range []string{"due", "claimed", "snoozed"} {
		a, err := p1.Create(ctx, agent, &askd.AskInput{Kind: askd.KindReady, Title: title}, app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Owner != "team:ops" {
			t.Fatalf("ask routed to %q, want team:ops", a.Owner)
		}
		ids = append(ids, a.ID)
		agent.Session += "-" // one attention ask per session
	}
	if _, err := p2.Claim(ctx, dave, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Snooze(ctx, dave, ids[2], clk.now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := p1.EscalateDue(ctx); err != nil || n != 0 {
		t.Fatalf("before a minute: escalated %d, %v", n, err)
	}

	// More due asks, so that sweeps overlap: each must still be escalated
	// once.
	for i := range 30 {
		agent.Session = "more-" + string(rune('a'+i))
		a, err := p1.Create(ctx, agent, &askd.AskInput{Kind: askd.KindReady, Title: "due too"}, app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}

	clk.add(time.Minute + time.Second)
	var total atomic.Int64
	var wg sync.WaitGroup
	for _, p := range []*app.Service{p1, p2, p1, p2, p1, p2, p1, p2} {
		wg.Go(func() {
			n, err := p.EscalateDue(ctx)
			if err != nil {
				t.Error(err)
			}
			total.Add(int64(n))
		})
	}
	wg.Wait()
	if total.Load() != 31 {
		t.Fatalf("escalated %d times, want 31: each due ask once", total.Load())
	}
	for _, id := range append([]int64{ids[0]}, ids[3:]...) {
		if n := escalations(t, p1, id); n != 1 {
			t.Fatalf("ask %d escalated %d times, want once", id, n)
		}
	}
	a, err := p2.Get(ctx, dave, ids[0])
	if err != nil || a.EscalatedTo != "carol" || a.EscalatedAt == nil {
		t.Fatalf("escalated ask %+v, %v", a, err)
	}
	for _, id := range ids[1:3] {
		if n := escalations(t, p1, id); n != 0 {
			t.Errorf("ask %d (claimed or snoozed) escalated %d times", id, n)
		}
	}
	// carol's Mine has it now; dave's (the team's) has it too.
	mine, err := p1.List(ctx, askd.Caller{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin}, askd.AskFilter{Status: askd.StatusPending}, true)
	if err != nil || len(mine) != 31 {
		t.Fatalf("carol's Mine: %d asks, %v; want the 31 escalated to her", len(mine), err)
	}

	// A restart: a new process on the same database escalates nothing again.
	p3 := app.New(testserver.OpenPostgres(t, url), app.Config{Now: clk.now})
	clk.add(time.Hour)
	if n, err := p3.EscalateDue(ctx); err != nil || n != 1 { // the snoozed one, its snooze over
		t.Fatalf("after a restart: escalated %d, %v; want only the snoozed ask", n, err)
	}
	if escalations(t, p3, ids[0]) != 1 || escalations(t, p3, ids[2]) != 1 || escalations(t, p3, ids[1]) != 0 {
		t.Fatalf("after a restart: rows %d, %d, %d", escalations(t, p3, ids[0]), escalations(t, p3, ids[1]), escalations(t, p3, ids[2]))
	}
}

// The same on SQLite, across a restart of the process on one file: the
// escalation is stored state, not a timer in memory.
func TestEscalationSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "askd.db")
	clk := &teamClock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	secret := teamFixture(t, st)
	svc := app.New(st, app.Config{Now: clk.now})
	agent, err := svc.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	agent.Session = "deploys"
	a, err := svc.Create(ctx, agent, &askd.AskInput{Kind: askd.KindReady, Title: "due"}, app.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Close()
	st.Close()

	clk.add(2 * time.Minute) // the process was down when it fell due
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc = app.New(st, app.Config{Now: clk.now})
	if n, err := svc.EscalateDue(ctx); err != nil || n != 1 {
		t.Fatalf("escalated %d, %v", n, err)
	}
	if n, err := svc.EscalateDue(ctx); err != nil || n != 0 {
		t.Fatalf("again: escalated %d, %v", n, err)
	}
	if escalations(t, svc, a.ID) != 1 {
		t.Fatalf("rows %d", escalations(t, svc, a.ID))
	}
}

// A new ask notifies the people it is routed to through their own
// channels, as them; an ask of no owner everyone with a channel; the
// server's notifiers only when nobody's own channel is reached; an
// escalation its target.
func TestRoutedNotifications(t *testing.T) {
	clk := &teamClock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "askd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	secret := teamFixture(t, st)
	admin := app.New(st, app.Config{})
	if _, _, err := admin.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "eve", Role: askd.RoleHuman, Access: askd.AccessViewer}); err != nil {
		t.Fatal(err)
	}
	_, unowned, err := admin.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "helper", Role: askd.RoleAgent})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(ctx, func(tx askd.Tx) error {
		for _, p := range []string{"carol", "dave", "eve"} {
			if err := tx.Teams.SetNotify(ctx, &askd.PersonNotify{Person: p, Ntfy: "https://ntfy.example/" + p}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := app.New(st, app.Config{Now: clk.now, Notifiers: []askd.Channel{{Type: askd.NotifyNtfy, URL: "https://ntfy.example/server"}}})
	notified := func(a *askd.Ask) map[string]bool {
		out := map[string]bool{}
		err := st.View(ctx, func(tx askd.Tx) error {
			for _, p := range []string{"carol", "dave", "eve"} {
				for _, why := range []string{"", "!escalated"} {
					if _, err := tx.Deliveries.Delivery(ctx, askd.PersonNotifyKey(a, p, askd.NotifyNtfy)+why); err == nil {
						out[p+why] = true
					}
				}
			}
			if _, err := tx.Deliveries.Delivery(ctx, askd.NotifyKey(a, 0)); err == nil {
				out["server"] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ask := func(secret, session string) *askd.Ask {
		c, err := svc.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		c.Session = session
		a, err := svc.Create(ctx, c, &askd.AskInput{Kind: askd.KindReady, Title: "look"}, app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	routed := ask(secret, "r1")
	if got := notified(routed); len(got) != 1 || !got["dave"] {
		t.Errorf("an ask routed to team ops notified %v, want only dave", got)
	}
	open := ask(unowned, "u1")
	if got := notified(open); len(got) != 3 || !got["carol"] || !got["dave"] || !got["eve"] {
		t.Errorf("an ask of no owner notified %v, want every person with a channel", got)
	}
	clk.add(2 * time.Minute)
	if n, err := svc.EscalateDue(ctx); err != nil || n != 1 {
		t.Fatalf("escalated %d, %v", n, err)
	}
	if got := notified(routed); !got["carol!escalated"] || got["dave!escalated"] {
		t.Errorf("the escalation notified %v, want carol", got)
	}
	// Nobody's own channel: the server's notifier.
	// (Through the service, which forgets the settings it keeps.)
	if _, err := svc.SetMyNotify(ctx, askd.Caller{Name: "dave", Role: askd.RoleHuman, Access: askd.AccessApprover}, askd.PersonNotify{}); err != nil {
		t.Fatal(err)
	}
	fallback := ask(secret, "r2")
	if got := notified(fallback); len(got) != 1 || !got["server"] {
		t.Errorf("an ask reaching nobody's channel notified %v, want the server's notifier", got)
	}
}
