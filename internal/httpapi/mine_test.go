package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// routedCrew is a crew with teams and agents of every kind of owner, for
// Mine against All:
//
//	person  role      teams
//	alice   admin     -
//	bob     approver  platform
//	carol   viewer    platform
//	dave    approver  ops (escalates to bob after a minute)
//
//	agent        owner
//	ag-alice     alice
//	ag-platform  team:platform
//	ag-ops       team:ops
//	ag-dave      dave
//	agent-1      - (the test server's: everyone's)
type routedCrew struct {
	*crew
	clock  *testserver.Clock
	agents map[string]*client.Client
}

func startRoutedCrew(t *testing.T) *routedCrew {
	t.Helper()
	clock := &testserver.Clock{}
	srv := testserver.Start(t, testserver.Options{Config: app.Config{Now: clock.Now, QuestionTimeout: time.Hour}})
	rc := &routedCrew{crew: startCrew(t, srv), clock: clock, agents: map[string]*client.Client{}}
	rc.person(t, "dave", askd.AccessApprover)
	ctx := ctxT(t)
	if _, err := srv.App.CreateTeam(ctx, app.Itself, app.TeamInput{Name: "platform", Members: []string{"bob", "carol"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.App.CreateTeam(ctx, app.Itself, app.TeamInput{Name: "ops", Members: []string{"dave"}, EscalateAfter: time.Minute, EscalateTo: "bob"}); err != nil {
		t.Fatal(err)
	}
	for name, owner := range map[string]string{"ag-alice": "alice", "ag-platform": "team:platform", "ag-ops": "team:ops", "ag-dave": "dave"} {
		rc.agents[name] = rc.agent(t, name, owner)
	}
	rc.agents["agent-1"] = srv.Agent("s-agent-1")
	return rc
}

// ask asks a question of agent, in its session or in session if given.
func (rc *routedCrew) ask(t *testing.T, agent, session string) *askd.Ask {
	t.Helper()
	c := *rc.agents[agent]
	if session != "" {
		c.Session = session
	}
	a, err := c.Create(ctxT(t), &askd.AskInput{Kind: askd.KindQuestion, Questions: []askd.Question{{
		Question: fmt.Sprintf("Question %d?", rc.next()), Header: "Q", Options: []askd.Option{{Label: "yes"}, {Label: "no"}}}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// escalate moves the clock past ops' escalation and waits until ask id is
// escalated (the server's sweep, or this one).
func (rc *routedCrew) escalate(t *testing.T, id int64) {
	t.Helper()
	rc.clock.Skip(2 * time.Minute)
	testserver.Eventually(t, fmt.Sprintf("ask %d escalated", id), func() bool {
		if _, err := rc.srv.App.EscalateDue(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		a := stored(t, rc.srv, id)
		return a.EscalatedTo == "bob"
	})
}

// agentsOf is the agents of asks, sorted, with their status when settled.
func agentsOf(asks []*askd.Ask) string {
	out := make([]string, len(asks))
	for i, a := range asks {
		out[i] = a.Agent
		if !a.Pending() {
			out[i] += "(" + string(a.Status) + ")"
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// TestMineAndAll: each person's Mine (owner themself, a team of theirs,
// nobody, or escalated to them) against All, on the list, its cursor pages
// (whose Askd-Total counts Mine) and the sessions, whole and paged.
func TestMineAndAll(t *testing.T) {
	rc := startRoutedCrew(t)
	ctx := ctxT(t)
	for _, name := range []string{"ag-alice", "ag-platform", "ag-ops", "ag-dave", "agent-1"} {
		rc.ask(t, name, "")
	}
	// ops' ask escalates to bob; one of dave's is settled.
	opsAsk, err := rc.people["alice"].List(ctx, client.ListOptions{Agent: "ag-ops"})
	if err != nil || len(opsAsk) != 1 {
		t.Fatalf("ops' asks: %v, %v", opsAsk, err)
	}
	rc.escalate(t, opsAsk[0].ID)
	settled := rc.ask(t, "ag-dave", "s-done")
	if _, err := rc.people["alice"].Dismiss(ctx, settled.ID, ""); err != nil {
		t.Fatal(err)
	}

	all := "ag-alice ag-dave ag-dave(cancelled) ag-ops ag-platform agent-1"
	tests := []struct {
		who      string
		mine     string
		sessions string // agent/session pending/total, Mine
	}{
		{"alice", "ag-alice agent-1", "ag-alice/s-ag-alice 1/1 agent-1/s-agent-1 1/1"},
		{"bob", "ag-ops ag-platform agent-1", "ag-ops/s-ag-ops 1/1 ag-platform/s-ag-platform 1/1 agent-1/s-agent-1 1/1"},
		{"carol", "ag-platform agent-1", "ag-platform/s-ag-platform 1/1 agent-1/s-agent-1 1/1"},
		{"dave", "ag-dave ag-dave(cancelled) ag-ops agent-1", "ag-dave/s-ag-dave 1/1 ag-dave/s-done 0/1 ag-ops/s-ag-ops 1/1 agent-1/s-agent-1 1/1"},
	}
	sessionsOf := func(ss []*askd.SessionInfo) string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = fmt.Sprintf("%s/%s %d/%d", s.Agent, s.Name, s.Pending, s.Total)
		}
		return strings.Join(out, " ")
	}
	for _, tt := range tests {
		t.Run(tt.who, func(t *testing.T) {
			c := rc.people[tt.who]
			mine, err := c.List(ctx, client.ListOptions{Mine: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := agentsOf(mine); got != tt.mine {
				t.Errorf("Mine = %s, want %s", got, tt.mine)
			}
			everyone, err := c.List(ctx, client.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := agentsOf(everyone); got != all {
				t.Errorf("All = %s, want %s", got, all)
			}

			// Pages of one: the pending asks of Mine, each page counting them.
			wantPending := strings.ReplaceAll(tt.mine, " ag-dave(cancelled)", "")
			var paged []*askd.Ask
			o := client.ListOptions{Mine: true, Limit: 1}
			for {
				page, info, err := c.ListPage(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(strings.Fields(wantPending)); info.Total != n {
					t.Errorf("Askd-Total of Mine = %d, want %d", info.Total, n)
				}
				paged = append(paged, page...)
				if o.Cursor = info.Next; o.Cursor == "" {
					break
				}
			}
			if got := agentsOf(paged); got != wantPending {
				t.Errorf("Mine by pages = %s, want %s", got, wantPending)
			}
			if _, info, err := c.ListPage(ctx, client.ListOptions{Limit: 1}); err != nil || info.Total != 5 {
				t.Errorf("Askd-Total of All = %d, %v; want 5", info.Total, err)
			}

			ss, info, err := c.SessionsWith(ctx, client.SessionOptions{Mine: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := sessionsOf(ss); got != tt.sessions || info.Total != len(ss) {
				t.Errorf("sessions of Mine = %s (total %d), want %s", got, info.Total, tt.sessions)
			}
			var pagedSessions []*askd.SessionInfo
			p := &client.PageOptions{Limit: 1}
			for {
				page, info, err := c.SessionsWith(ctx, client.SessionOptions{Mine: true, Page: p})
				if err != nil {
					t.Fatal(err)
				}
				if info.Total != len(ss) {
					t.Errorf("Askd-Total of Mine's sessions = %d, want %d", info.Total, len(ss))
				}
				pagedSessions = append(pagedSessions, page...)
				if p.Cursor = info.Next; p.Cursor == "" {
					break
				}
			}
			if got := sessionsOf(pagedSessions); got != tt.sessions {
				t.Errorf("sessions of Mine by pages = %s, want %s", got, tt.sessions)
			}
			if ss, err := c.Sessions(ctx); err != nil || len(ss) != 6 {
				t.Errorf("sessions of All: %d, %v; want 6", len(ss), err)
			}
		})
	}

	if status, body := rawRequest(t, rc.srv, http.MethodGet, "/api/asks?mine=yes", rc.srv.HumanToken, "", nil); status != http.StatusBadRequest || !strings.Contains(body, "mine:") {
		t.Errorf("mine=yes: %d %s", status, body)
	}
	if status, body := rawRequest(t, rc.srv, http.MethodGet, "/api/sessions?mine=2", rc.srv.HumanToken, "", nil); status != http.StatusBadRequest || !strings.Contains(body, "mine:") {
		t.Errorf("sessions mine=2: %d %s", status, body)
	}
}

// TestMineEvents: GET /api/events?mine=true streams only the events of
// asks routed to the person: created for their own, their team's and
// nobody's; an escalation to them as it happens; and a team joined while
// the stream is open, within the 5 s a change of role takes.
func TestMineEvents(t *testing.T) {
	rc := startRoutedCrew(t)
	ctx := ctxT(t)
	streams := map[string]<-chan client.Event{}
	for _, who := range []string{"alice", "bob", "carol", "dave"} {
		evs, err := rc.people[who].EventsWith(ctx, -1, client.EventFilter{Mine: true})
		if err != nil {
			t.Fatal(err)
		}
		streams[who] = evs
	}
	everyone, err := rc.people["alice"].Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	// read collects a stream's events up to the sentinel ask's creation,
	// as "action agent".
	read := func(t *testing.T, evs <-chan client.Event, sentinel int64) string {
		t.Helper()
		var got []string
		for e := range evs {
			got = append(got, e.Event.Action+" "+e.Event.Ask.Agent)
			if e.Event.AskID == sentinel {
				return strings.Join(got, ", ")
			}
		}
		t.Fatal("the stream ended before the sentinel")
		return ""
	}

	for _, name := range []string{"ag-platform", "ag-alice", "ag-dave", "ag-ops"} {
		rc.ask(t, name, "")
	}
	ops, err := rc.people["alice"].List(ctx, client.ListOptions{Agent: "ag-ops"})
	if err != nil || len(ops) != 1 {
		t.Fatalf("ops' asks: %v, %v", ops, err)
	}
	rc.escalate(t, ops[0].ID)
	sentinel := rc.ask(t, "agent-1", "").ID
	tests := []struct {
		who  string
		evs  <-chan client.Event
		want string
	}{
		{"alice", streams["alice"], "created ag-alice, created agent-1"},
		{"bob", streams["bob"], "created ag-platform, escalated ag-ops, created agent-1"},
		{"carol", streams["carol"], "created ag-platform, created agent-1"},
		{"dave", streams["dave"], "created ag-dave, created ag-ops, escalated ag-ops, created agent-1"},
		{"everyone", everyone, "created ag-platform, created ag-alice, created ag-dave, created ag-ops, escalated ag-ops, created agent-1"},
	}
	for _, tt := range tests {
		if got := read(t, tt.evs, sentinel); got != tt.want {
			t.Errorf("%s's stream: %s, want %s", tt.who, got, tt.want)
		}
	}

	// carol joins ops while her stream is open: after the 5 s a change
	// takes, ops' new asks are hers too.
	if _, err := rc.people["alice"].AddMembers(ctx, "ops", "carol"); err != nil {
		t.Fatal(err)
	}
	rc.clock.Skip(6 * time.Second)
	rc.ask(t, "ag-ops", "")
	sentinel = rc.ask(t, "agent-1", "").ID
	if got, want := read(t, streams["carol"], sentinel), "created ag-ops, created agent-1"; got != want {
		t.Errorf("carol's stream after joining ops: %s, want %s", got, want)
	}

	if status, body := rawRequest(t, rc.srv, http.MethodGet, "/api/events?mine=maybe", rc.srv.HumanToken, "", nil); status != http.StatusBadRequest || !strings.Contains(body, "mine:") {
		t.Errorf("events mine=maybe: %d %s", status, body)
	}
}
