package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/testserver"
)

// A team's inbox (SPEC §10) through the real server: what each role may
// do, claims, Mine against All, teams and people's own notifications.

// crew is a test server with people of each role: alice the admin (the
// test server's first person), bob an approver, carol a viewer.
type crew struct {
	srv    *testserver.Server
	people map[string]*client.Client
	n      atomic.Int64 // for names of sessions and asks
}

func startCrew(t *testing.T, srv *testserver.Server) *crew {
	t.Helper()
	cr := &crew{srv: srv, people: map[string]*client.Client{"alice": srv.Human()}}
	cr.person(t, "bob", askd.AccessApprover)
	cr.person(t, "carol", askd.AccessViewer)
	return cr
}

// person makes a person with access and returns their client.
func (cr *crew) person(t *testing.T, name string, access askd.Access) *client.Client {
	t.Helper()
	c := client.New(cr.srv.URL, cr.srv.TokenWith(t, app.TokenSpec{Name: name, Role: askd.RoleHuman, Access: access}))
	cr.people[name] = c
	return c
}

// agent makes an agent token owned by owner ("" for none), asking in a
// session of its name.
func (cr *crew) agent(t *testing.T, name, owner string) *client.Client {
	t.Helper()
	c := client.New(cr.srv.URL, cr.srv.TokenWith(t, app.TokenSpec{Name: name, Role: askd.RoleAgent, Owner: owner}))
	c.Session = "s-" + name
	return c
}

// next is a number no other call of the crew's test returns.
func (cr *crew) next() int64 { return cr.n.Add(1) }

// decision asks a new decision of the test server's agent (owned by no
// one) in a session of its own.
func (cr *crew) decision(t *testing.T) *askd.Ask {
	t.Helper()
	ag := cr.srv.Agent(fmt.Sprintf("d%d", cr.next()))
	a, err := ag.Create(ctxT(t), &askd.AskInput{Kind: askd.KindDecision, Title: "Which day?",
		Options: []askd.Option{{Label: "Monday"}, {Label: "Friday"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// approval asks a new request_approval of the test server's agent in a
// session of its own.
func (cr *crew) approval(t *testing.T) *askd.Ask {
	t.Helper()
	n := cr.next()
	ag := cr.srv.Agent(fmt.Sprintf("p%d", n))
	a, err := ag.Create(ctxT(t), &askd.AskInput{Kind: askd.KindApproval, Title: fmt.Sprintf("Deploy build %d", n)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// storeState is everything a refusal must leave as it was, as JSON: every
// ask with its history, every rule, team, person's notification setting
// and token.
func storeState(t *testing.T, srv *testserver.Server) string {
	t.Helper()
	ctx := ctxT(t)
	var state struct {
		Asks    []*askd.Ask
		History [][]*askd.Event
		Rules   []*askd.Rule
		Teams   []*askd.Team
		Notify  []*askd.PersonNotify
		Tokens  []*askd.Token
	}
	err := srv.Store.View(ctx, func(tx askd.Tx) (err error) {
		if state.Asks, err = tx.Asks.FindAsks(ctx, askd.AskFilter{}); err != nil {
			return err
		}
		for _, a := range state.Asks {
			h, err := tx.Events.AskHistory(ctx, a.ID)
			if err != nil {
				return err
			}
			state.History = append(state.History, h)
		}
		if state.Rules, err = tx.Rules.FindRules(ctx, askd.RuleFilter{}); err != nil {
			return err
		}
		if state.Teams, err = tx.Teams.Teams(ctx); err != nil {
			return err
		}
		if state.Notify, err = tx.Teams.NotifyAll(ctx); err != nil {
			return err
		}
		state.Tokens, err = tx.Tokens.Tokens(ctx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	// A person's settings marshal without their name: add it.
	for _, n := range state.Notify {
		b = fmt.Appendf(b, " %s=%s,%s", n.Person, n.Ntfy, n.Webhook)
	}
	return string(b)
}

// TestEveryHumanActionByRole: each act of a person, by an admin, an
// approver and a viewer through the real server. One above the person's
// role is 403 naming the role it needs, and the store reads back exactly
// as it was; one within it succeeds.
func TestEveryHumanActionByRole(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// claimant is who holds a claim for who's act: who, unless a viewer
	// (who cannot claim), then the admin.
	claimant := func(who string) *client.Client {
		if who == "carol" {
			return cr.people["alice"]
		}
		return cr.people[who]
	}
	// team makes a team for an act on it, with bob in it.
	team := func(t *testing.T) string {
		name := fmt.Sprintf("team-%d", cr.next())
		_, err := app.CreateTeam(ctx, srv.Store, app.TeamInput{Name: name, Members: []string{"bob"}})
		must(t, err)
		return name
	}

	tests := []struct {
		name string
		need askd.Access
		// act sets up what it needs (before the store is read), and
		// returns the act itself, by the person named who.
		act func(t *testing.T, who string) func() error
	}{
		{"answer", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.decision(t)
			return func() error {
				_, err := cr.people[who].Answer(ctx, a.ID, &askd.Answer{Answer: "Monday"})
				return err
			}
		}},
		{"dismiss", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.decision(t)
			return func() error { _, err := cr.people[who].Dismiss(ctx, a.ID, "not now"); return err }
		}},
		{"snooze", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.decision(t)
			return func() error { _, err := cr.people[who].Snooze(ctx, a.ID, 3600e9); return err }
		}},
		{"claim", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.decision(t)
			return func() error { _, err := cr.people[who].Claim(ctx, a.ID); return err }
		}},
		{"release", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.decision(t)
			_, err := claimant(who).Claim(ctx, a.ID)
			must(t, err)
			return func() error { _, err := cr.people[who].Release(ctx, a.ID); return err }
		}},
		{"rule create", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.approval(t)
			return func() error {
				_, err := cr.people[who].CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
				return err
			}
		}},
		{"rule extend", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.approval(t)
			r, err := claimant(who).CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
			must(t, err)
			return func() error { _, err := cr.people[who].ChangeRule(ctx, r.ID, askd.RuleLife{For: "2h"}); return err }
		}},
		{"rule revoke", askd.AccessApprover, func(t *testing.T, who string) func() error {
			a := cr.approval(t)
			r, err := claimant(who).CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
			must(t, err)
			return func() error { _, err := cr.people[who].RevokeRule(ctx, r.ID); return err }
		}},
		{"answer link", askd.AccessApprover, func(t *testing.T, who string) func() error {
			// Links are minted for people who may answer: a viewer's were
			// minted while they were an approver.
			a := cr.decision(t)
			if who == "carol" {
				must(t, app.SetAccess(ctx, srv.Store, "carol", askd.AccessApprover))
				defer func() { must(t, app.SetAccess(ctx, srv.Store, "carol", askd.AccessViewer)) }()
			}
			links, err := srv.App.MintAnswerLinksFor(ctx, who, a.ID, a.Revision, 0)
			if err != nil || len(links) != 2 {
				t.Fatalf("mint for %s: %d links, %v", who, len(links), err)
			}
			return func() error {
				status, page := linkPost(t, srv.URL+"/a/"+links[0].Code, "confirm=1")
				if status != http.StatusOK {
					return &client.Error{Status: status, Message: page}
				}
				return nil
			}
		}},
		{"list teams", askd.AccessAdmin, func(t *testing.T, who string) func() error {
			return func() error { _, err := cr.people[who].Teams(ctx); return err }
		}},
		{"create a team", askd.AccessAdmin, func(t *testing.T, who string) func() error {
			name := fmt.Sprintf("new-%d", cr.next())
			return func() error {
				_, err := cr.people[who].CreateTeam(ctx, name, []string{"bob"}, 600e9, "carol")
				return err
			}
		}},
		{"set a team's escalation", askd.AccessAdmin, func(t *testing.T, who string) func() error {
			name := team(t)
			return func() error { _, err := cr.people[who].SetEscalation(ctx, name, 600e9, "alice"); return err }
		}},
		{"add a member", askd.AccessAdmin, func(t *testing.T, who string) func() error {
			name := team(t)
			return func() error { _, err := cr.people[who].AddMembers(ctx, name, "carol"); return err }
		}},
		{"remove a member", askd.AccessAdmin, func(t *testing.T, who string) func() error {
			name := team(t)
			return func() error { _, err := cr.people[who].RemoveMember(ctx, name, "bob"); return err }
		}},
		{"delete a team", askd.AccessAdmin, func(t *testing.T, who string) func() error {
			name := team(t)
			return func() error { return cr.people[who].DeleteTeam(ctx, name) }
		}},
		{"read my notifications", askd.AccessViewer, func(t *testing.T, who string) func() error {
			return func() error { _, err := cr.people[who].MyNotify(ctx); return err }
		}},
		{"set my notifications", askd.AccessViewer, func(t *testing.T, who string) func() error {
			return func() error {
				_, err := cr.people[who].SetMyNotify(ctx, askd.PersonNotify{Ntfy: "https://ntfy.sh/askd-" + who})
				return err
			}
		}},
	}
	roles := []struct {
		who    string
		access askd.Access
	}{{"alice", askd.AccessAdmin}, {"bob", askd.AccessApprover}, {"carol", askd.AccessViewer}}
	rank := map[askd.Access]int{askd.AccessViewer: 1, askd.AccessApprover: 2, askd.AccessAdmin: 3}
	for _, tt := range tests {
		for _, r := range roles {
			t.Run(tt.name+" by "+string(r.access), func(t *testing.T) {
				act := tt.act(t, r.who)
				before := storeState(t, srv)
				err := act()
				if rank[r.access] >= rank[tt.need] {
					if err != nil {
						t.Fatalf("%s (%s): %v", r.who, r.access, err)
					}
					return
				}
				wantStatus(t, err, http.StatusForbidden, fmt.Sprintf("needs the %s role", tt.need))
				if after := storeState(t, srv); after != before {
					t.Errorf("the store changed on a refusal\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// TestAgentsGetNoneOfPeoplesActs: an agent token on each of the team
// paths gets 403, and nothing changes.
func TestAgentsGetNoneOfPeoplesActs(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := srv.Agent("s1")
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Done"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := storeState(t, srv)
	for name, act := range map[string]func() error{
		"claim":        func() error { _, err := agent.Claim(ctx, a.ID); return err },
		"release":      func() error { _, err := agent.Release(ctx, a.ID); return err },
		"teams":        func() error { _, err := agent.Teams(ctx); return err },
		"create team":  func() error { _, err := agent.CreateTeam(ctx, "x", nil, 0, ""); return err },
		"notify":       func() error { _, err := agent.MyNotify(ctx); return err },
		"set notify":   func() error { _, err := agent.SetMyNotify(ctx, askd.PersonNotify{}); return err },
		"mine":         func() error { _, _, err := agent.SessionsWith(ctx, client.SessionOptions{Mine: true}); return err },
		"delete team":  func() error { return agent.DeleteTeam(ctx, "x") },
		"add members":  func() error { _, err := agent.AddMembers(ctx, "x", "alice"); return err },
		"drop member":  func() error { _, err := agent.RemoveMember(ctx, "x", "alice"); return err },
		"set escalate": func() error { _, err := agent.SetEscalation(ctx, "x", 0, ""); return err },
	} {
		if err := act(); err == nil {
			t.Errorf("%s by an agent: no error", name)
		} else {
			wantStatus(t, err, http.StatusForbidden, "agent tokens cannot")
		}
	}
	if after := storeState(t, srv); after != before {
		t.Errorf("the store changed\nbefore %s\nafter  %s", before, after)
	}
}

// TestMe: GET /api/me has a person's access, and an agent's owner when it
// has one; role stays human or agent.
func TestMe(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	tests := []struct {
		name string
		c    *client.Client
		want map[string]string
	}{
		{"admin", cr.people["alice"], map[string]string{"name": "alice", "role": "human", "access": "admin"}},
		{"approver", cr.people["bob"], map[string]string{"name": "bob", "role": "human", "access": "approver"}},
		{"viewer", cr.people["carol"], map[string]string{"name": "carol", "role": "human", "access": "viewer"}},
		{"agent of no owner", srv.Agent("s1"), map[string]string{"name": "agent-1", "role": "agent", "session": "s1"}},
		{"agent of a person", cr.agent(t, "bobs", "bob"), map[string]string{"name": "bobs", "role": "agent", "session": "s-bobs", "owner": "bob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Me(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("me = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMyNotify: PUT replaces the whole setting and GET reads it; URLs are
// checked as an agent's webhook is (naming the field), unless the operator
// allows the address; nothing is stored on a refusal.
func TestMyNotify(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	bob := cr.people["bob"]
	both := askd.PersonNotify{Ntfy: "https://ntfy.sh/bob-askd", Webhook: "https://hooks.example.com/bob"}
	if got, err := bob.SetMyNotify(ctx, both); err != nil || *got != both {
		t.Fatalf("set = %+v, %v", got, err)
	}
	if got, err := bob.MyNotify(ctx); err != nil || *got != both {
		t.Fatalf("get = %+v, %v; want %+v", got, err, both)
	}
	// Replaces the whole: the webhook goes.
	only := askd.PersonNotify{Ntfy: "https://ntfy.sh/bob-2"}
	if _, err := bob.SetMyNotify(ctx, only); err != nil {
		t.Fatal(err)
	}
	if got, _ := bob.MyNotify(ctx); *got != only {
		t.Errorf("after a PUT of ntfy alone: %+v, want %+v", got, only)
	}
	// Someone else's is their own.
	if got, _ := cr.people["carol"].MyNotify(ctx); *got != (askd.PersonNotify{}) {
		t.Errorf("carol's = %+v, want none", got)
	}

	refusals := []struct {
		name string
		body string
		says string
	}{
		{"loopback ntfy", `{"ntfy": "http://127.0.0.1:8080/topic"}`, "ntfy: host 127.0.0.1: loopback address"},
		{"localhost webhook", `{"webhook": "http://localhost/hook"}`, "webhook: host localhost: names this machine"},
		{"private webhook", `{"ntfy": "https://ntfy.sh/x", "webhook": "http://10.1.2.3/hook"}`, "webhook: host 10.1.2.3: private"},
		{"not http", `{"ntfy": "ftp://ntfy.sh/x"}`, "ntfy: must be an http or https URL"},
		{"no host", `{"webhook": "https:///x"}`, "webhook: has no host"},
		{"unknown field", `{"person": "alice"}`, "person"},
		{"too long", `{"ntfy": "https://ntfy.sh/` + strings.Repeat("x", askd.MaxURLBytes) + `"}`, "ntfy:"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			before := storeState(t, srv)
			status, body := rawRequest(t, srv, http.MethodPut, "/api/me/notify", bob.Token, tt.body, nil)
			if status != http.StatusBadRequest || !strings.Contains(body, tt.says) {
				t.Errorf("PUT %s = %d %s, want 400 saying %q", tt.body, status, body, tt.says)
			}
			if after := storeState(t, srv); after != before {
				t.Errorf("the store changed\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	// {} clears the setting.
	if got, err := bob.SetMyNotify(ctx, askd.PersonNotify{}); err != nil || *got != (askd.PersonNotify{}) {
		t.Fatalf("clear = %+v, %v", got, err)
	}
	if got, _ := bob.MyNotify(ctx); *got != (askd.PersonNotify{}) {
		t.Errorf("after {}: %+v, want none", got)
	}

	t.Run("allowed by the operator", func(t *testing.T) {
		srv := testserver.Start(t, testserver.Options{Config: app.Config{WebhookAllow: loopbackAllowed()}})
		n := askd.PersonNotify{Ntfy: "http://127.0.0.1:8080/topic"}
		if got, err := srv.Human().SetMyNotify(ctxT(t), n); err != nil || *got != n {
			t.Errorf("set = %+v, %v; want it allowed", got, err)
		}
	})
}

// loopbackAllowed is an operator's --webhook-allow 127.0.0.0/8.
func loopbackAllowed() askd.WebhookAllow {
	return askd.WebhookAllow{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}

// TestClaim: a claim is on the ask's JSON, live, and in its history; the
// claimer's claim again changes nothing; another's is 409 with the ask,
// naming who holds it; an approver releases only their own, an admin
// anyone's; answering ends it; a settled ask cannot be claimed or
// released (409 with its state).
func TestClaim(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	alice, bob := cr.people["alice"], cr.people["bob"]
	dave := cr.person(t, "dave", askd.AccessApprover)
	events, err := alice.Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}

	a := cr.decision(t)
	got, err := bob.Claim(ctx, a.ID)
	if err != nil || got.ClaimedBy != "bob" || got.ClaimedAt == nil {
		t.Fatalf("claim = %+v, %v; want claimed by bob", got, err)
	}
	seen := false
	for e := range events { // live to everyone: the inbox's stream
		if e.Event.AskID == a.ID && e.Event.Action == askd.ActionClaimed {
			if e.Type != "ask.updated" || e.Event.Ask.ClaimedBy != "bob" || e.Event.Actor != "bob" {
				t.Errorf("event %s %+v, want ask.updated claimed by bob", e.Type, e.Event)
			}
			seen = true
			break
		}
	}
	if !seen {
		t.Fatal("the event stream ended without the claim")
	}
	again, err := bob.Claim(ctx, a.ID)
	if err != nil || !again.ClaimedAt.Equal(*got.ClaimedAt) {
		t.Errorf("bob's claim again = %+v, %v; want his claim as it was", again, err)
	}

	before := storeState(t, srv)
	_, err = dave.Claim(ctx, a.ID)
	wantStatus(t, err, http.StatusConflict, "claimed by bob")
	if ae := err.(*client.Error); ae.Ask == nil || ae.Ask.ClaimedBy != "bob" {
		t.Errorf("409's ask = %+v, want the ask claimed by bob", ae.Ask)
	}
	_, err = dave.Release(ctx, a.ID)
	wantStatus(t, err, http.StatusForbidden, "claimed by bob: only they or an admin")
	if after := storeState(t, srv); after != before {
		t.Errorf("the store changed on a refusal\nbefore %s\nafter  %s", before, after)
	}

	// An admin releases anyone's; then dave may claim.
	if r, err := alice.Release(ctx, a.ID); err != nil || r.ClaimedBy != "" || r.ClaimedAt != nil {
		t.Fatalf("admin's release = %+v, %v", r, err)
	}
	if _, err := dave.Claim(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	// Another approver may still answer (the first answer wins); the
	// claim ends with it.
	answered, err := bob.Answer(ctx, a.ID, &askd.Answer{Answer: "Friday"})
	if err != nil || answered.ClaimedBy != "" || answered.ClaimedAt != nil || answered.SettledBy != "bob" {
		t.Fatalf("answer over dave's claim = %+v, %v; want settled by bob, claim gone", answered, err)
	}
	for _, act := range []func() (*askd.Ask, error){
		func() (*askd.Ask, error) { return dave.Claim(ctx, a.ID) },
		func() (*askd.Ask, error) { return dave.Release(ctx, a.ID) },
	} {
		_, err := act()
		wantStatus(t, err, http.StatusConflict, "")
		if ae := err.(*client.Error); ae.Ask == nil || ae.Ask.Status != askd.StatusAnswered {
			t.Errorf("409's ask = %+v, want the answered ask", ae.Ask)
		}
	}

	d, err := alice.Show(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, e := range d.History {
		rows = append(rows, e.Action+" by "+e.Actor)
	}
	want := "created by agent-1, claimed by bob, released by alice, claimed by dave, answered by bob"
	if got := strings.Join(rows, ", "); got != want {
		t.Errorf("history %s, want %s", got, want)
	}

	// A body other than {} is refused by name; a bad id by its field.
	b := cr.decision(t)
	if status, body := rawRequest(t, srv, http.MethodPost, fmt.Sprintf("/api/asks/%d/claim", b.ID), srv.HumanToken, `{"for": "bob"}`, nil); status != http.StatusBadRequest || !strings.Contains(body, "for") {
		t.Errorf("claim with a body = %d %s", status, body)
	}
	if status, body := rawRequest(t, srv, http.MethodPost, "/api/asks/x/claim", srv.HumanToken, `{}`, nil); status != http.StatusBadRequest || !strings.Contains(body, "id:") {
		t.Errorf("claim of id x = %d %s", status, body)
	}
	if _, err := bob.Claim(ctx, 1<<40); askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Errorf("claim of no ask: %v, want 404", err)
	}
}

// TestClaimRace: two people claiming one ask at once, many times over, on
// SQLite and PostgreSQL: one wins each time, the other is told who (409
// with the ask), and the history holds one claim.
func TestClaimRace(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		cr := startCrew(t, srv)
		ctx := ctxT(t)
		people := []string{"alice", "bob"}
		for round := range 25 {
			a := cr.decision(t)
			errs := make([]error, len(people))
			start := make(chan struct{})
			done := make(chan int)
			for i, who := range people {
				go func() {
					<-start
					_, errs[i] = cr.people[who].Claim(ctx, a.ID)
					done <- i
				}()
			}
			close(start)
			<-done
			<-done
			var winner, loser int
			switch {
			case errs[0] == nil && errs[1] != nil:
				winner, loser = 0, 1
			case errs[1] == nil && errs[0] != nil:
				winner, loser = 1, 0
			default:
				t.Fatalf("round %d: errors %v, want exactly one claim to win", round, errs)
			}
			wantStatus(t, errs[loser], http.StatusConflict, "claimed by "+people[winner])
			if ae := errs[loser].(*client.Error); ae.Ask == nil || ae.Ask.ClaimedBy != people[winner] {
				t.Fatalf("round %d: the 409's ask %+v, want claimed by %s", round, ae.Ask, people[winner])
			}
			d, err := cr.people["alice"].Show(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			claims := 0
			for _, e := range d.History {
				if e.Action == askd.ActionClaimed {
					claims++
					if e.Actor != people[winner] {
						t.Errorf("round %d: claimed by %s in the history, want %s", round, e.Actor, people[winner])
					}
				}
			}
			if claims != 1 || d.ClaimedBy != people[winner] {
				t.Fatalf("round %d: %d claimed rows, claimed_by %q; want one, %s", round, claims, d.ClaimedBy, people[winner])
			}
		}
	})
}

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
	if _, err := app.CreateTeam(ctx, srv.Store, app.TeamInput{Name: "platform", Members: []string{"bob", "carol"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.CreateTeam(ctx, srv.Store, app.TeamInput{Name: "ops", Members: []string{"dave"}, EscalateAfter: time.Minute, EscalateTo: "bob"}); err != nil {
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

// TestTeamsAPI: an admin's team API as SPEC §10 lists it, durations as
// strings; each refusal names its field (or the team), and stores nothing.
func TestTeamsAPI(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	alice := cr.people["alice"]
	tok := srv.HumanToken

	status, body := rawRequest(t, srv, http.MethodPost, "/api/teams", tok, `{"name": "platform", "members": ["carol", "bob", "bob"], "escalate_after": "10m", "escalate_to": "alice"}`, nil)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var created map[string]any
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(created["members"]) != "[bob carol]" || created["escalate_after"] != "10m" || created["escalate_to"] != "alice" || created["name"] != "platform" {
		t.Errorf("created %s", body)
	}
	// A team of one that escalates to a team, and to itself.
	if _, err := alice.CreateTeam(ctx, "ops", nil, 90*time.Second, "team:ops"); err != nil {
		t.Fatal(err)
	}
	teams, err := alice.Teams(ctx)
	if err != nil || len(teams) != 2 || teams[0].Name != "ops" || teams[0].EscalateAfter != 90*time.Second || len(teams[0].Members) != 0 || teams[1].Name != "platform" {
		t.Fatalf("teams = %+v, %v", teams, err)
	}

	// An agent of platform's, and a team escalating to ops.
	cr.agent(t, "plat-agent", "team:platform")
	if _, err := alice.CreateTeam(ctx, "qa", []string{"dave"}, time.Minute, "team:ops"); err == nil {
		t.Fatal("qa with an unknown member dave: no error")
	}
	if _, err := alice.CreateTeam(ctx, "qa", nil, time.Minute, "team:ops"); err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"a name in use", "POST", "/api/teams", `{"name": "platform"}`, 409, "platform"},
		{"no name", "POST", "/api/teams", `{}`, 400, "name:"},
		{"a bad name", "POST", "/api/teams", `{"name": "-x"}`, 400, "name:"},
		{"an unknown member", "POST", "/api/teams", `{"name": "new", "members": ["bob", "zed"]}`, 400, `members[1]: "zed" is no person (a human token's name)`},
		{"an agent as member", "POST", "/api/teams", `{"name": "new", "members": ["agent-1"]}`, 400, `members[0]: "agent-1" is no person`},
		{"not a duration", "POST", "/api/teams", `{"name": "new", "escalate_after": "soon", "escalate_to": "bob"}`, 400, "escalate_after:"},
		{"under a second", "POST", "/api/teams", `{"name": "new", "escalate_after": "500ms", "escalate_to": "bob"}`, 400, "escalate_after: 500ms, must be at least 1s"},
		{"negative", "POST", "/api/teams", `{"name": "new", "escalate_after": "-1m", "escalate_to": "bob"}`, 400, "escalate_after:"},
		{"a duration without a target", "POST", "/api/teams", `{"name": "new", "escalate_after": "1m"}`, 400, "escalate_to: required"},
		{"a target without a duration", "POST", "/api/teams", `{"name": "new", "escalate_to": "bob"}`, 400, "escalate_after: required"},
		{"an unknown target person", "POST", "/api/teams", `{"name": "new", "escalate_after": "1m", "escalate_to": "zed"}`, 400, `escalate_to: "zed" is no person`},
		{"an unknown target team", "POST", "/api/teams", `{"name": "new", "escalate_after": "1m", "escalate_to": "team:nope"}`, 400, `escalate_to: no team "nope"`},
		{"a number as duration", "POST", "/api/teams", `{"name": "new", "escalate_after": 600, "escalate_to": "bob"}`, 400, "escalate_after"},
		{"an unknown field", "POST", "/api/teams", `{"name": "new", "owner": "bob"}`, 400, "owner"},
		{"patch under a second", "PATCH", "/api/teams/platform", `{"escalate_after": "1ms", "escalate_to": "bob"}`, 400, "escalate_after:"},
		{"patch half", "PATCH", "/api/teams/platform", `{"escalate_after": "20m"}`, 400, "escalate_to: required"},
		{"patch members", "PATCH", "/api/teams/platform", `{"members": ["bob"]}`, 400, "members"},
		{"patch an unknown team", "PATCH", "/api/teams/nope", `{"escalate_after": "1m", "escalate_to": "bob"}`, 404, "nope"},
		{"add nobody", "POST", "/api/teams/platform/members", `{"people": []}`, 400, "people: required"},
		{"add an unknown person", "POST", "/api/teams/platform/members", `{"people": ["alice", "zed"]}`, 400, `members[1]: "zed"`},
		{"add to an unknown team", "POST", "/api/teams/nope/members", `{"people": ["alice"]}`, 404, "nope"},
		{"remove a non-member", "DELETE", "/api/teams/platform/members/alice", ``, 404, "alice"},
		{"remove from an unknown team", "DELETE", "/api/teams/nope/members/bob", ``, 404, "nope"},
		{"delete an unknown team", "DELETE", "/api/teams/nope", ``, 404, "nope"},
		{"delete a team that owns an agent", "DELETE", "/api/teams/platform", ``, 400, `team "platform" owns agent token "plat-agent"`},
		{"delete a team escalated to", "DELETE", "/api/teams/ops", ``, 400, `team "qa" escalates to team "ops"`},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			before := storeState(t, srv)
			status, body := rawRequest(t, srv, tt.method, tt.path, tok, tt.body, nil)
			var e httpapi.ErrorBody
			if err := json.Unmarshal([]byte(body), &e); err != nil || status != tt.status || !strings.Contains(e.Error, tt.says) {
				t.Errorf("%s %s %s = %d %s, want %d saying %q", tt.method, tt.path, tt.body, status, body, tt.status, tt.says)
			}
			if after := storeState(t, srv); after != before {
				t.Errorf("the store changed\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	// Changes that succeed.
	team, err := alice.SetEscalation(ctx, "platform", time.Hour+30*time.Minute, "team:ops")
	if err != nil || team.EscalateAfter != 90*time.Minute || team.EscalateTo != "team:ops" {
		t.Fatalf("patch = %+v, %v", team, err)
	}
	if status, body := rawRequest(t, srv, "PATCH", "/api/teams/platform", tok, `{"escalate_after": "1h30m0s", "escalate_to": "team:ops"}`, nil); status != 200 || !strings.Contains(body, `"escalate_after":"1h30m"`) {
		t.Errorf("patch reply %d %s", status, body)
	}
	if team, err = alice.SetEscalation(ctx, "platform", 0, ""); err != nil || team.EscalateAfter != 0 || team.EscalateTo != "" {
		t.Fatalf("escalation off = %+v, %v", team, err)
	}
	if team, err = alice.AddMembers(ctx, "platform", "alice", "bob"); err != nil || fmt.Sprint(team.Members) != "[alice bob carol]" {
		t.Fatalf("add = %+v, %v", team, err)
	}
	if team, err = alice.RemoveMember(ctx, "platform", "carol"); err != nil || fmt.Sprint(team.Members) != "[alice bob]" {
		t.Fatalf("remove = %+v, %v", team, err)
	}
	// Escalating to ops, qa kept ops; once qa is gone, ops may go (its
	// escalation to itself does not hold it).
	for _, name := range []string{"qa", "ops"} {
		if err := alice.DeleteTeam(ctx, name); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	if teams, err := alice.Teams(ctx); err != nil || len(teams) != 1 || teams[0].Name != "platform" {
		t.Errorf("teams after deleting qa and ops = %d, %v", len(teams), err)
	}
}
