package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
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
		Asks     []*askd.Ask
		History  [][]*askd.Event
		Rules    []*askd.Rule
		Policies []*askd.Policy
		Teams    []*askd.Team
		Notify   []*askd.PersonNotify
		Tokens   []*askd.Token
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
		if state.Policies, err = tx.Policies.Policies(ctx); err != nil {
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
		_, err := srv.App.CreateTeam(ctx, app.Itself, app.TeamInput{Name: name, Members: []string{"bob"}})
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
				must(t, srv.App.SetAccess(ctx, app.Itself, "carol", askd.AccessApprover))
				defer func() { must(t, srv.App.SetAccess(ctx, app.Itself, "carol", askd.AccessViewer)) }()
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
	// This server mails no one: each reply says so (mail_off).
	both := askd.PersonNotify{Ntfy: "https://ntfy.sh/bob-askd", Webhook: "https://hooks.example.com/bob", MailOff: true}
	if got, err := bob.SetMyNotify(ctx, both); err != nil || *got != both {
		t.Fatalf("set = %+v, %v", got, err)
	}
	if got, err := bob.MyNotify(ctx); err != nil || *got != both {
		t.Fatalf("get = %+v, %v; want %+v", got, err, both)
	}
	// Replaces the whole: the webhook goes.
	only := askd.PersonNotify{Ntfy: "https://ntfy.sh/bob-2", MailOff: true}
	if _, err := bob.SetMyNotify(ctx, only); err != nil {
		t.Fatal(err)
	}
	if got, _ := bob.MyNotify(ctx); *got != only {
		t.Errorf("after a PUT of ntfy alone: %+v, want %+v", got, only)
	}
	// Someone else's is their own.
	if got, _ := cr.people["carol"].MyNotify(ctx); *got != (askd.PersonNotify{MailOff: true}) {
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
	if got, err := bob.SetMyNotify(ctx, askd.PersonNotify{}); err != nil || *got != (askd.PersonNotify{MailOff: true}) {
		t.Fatalf("clear = %+v, %v", got, err)
	}
	if got, _ := bob.MyNotify(ctx); *got != (askd.PersonNotify{MailOff: true}) {
		t.Errorf("after {}: %+v, want none", got)
	}

	t.Run("allowed by the operator", func(t *testing.T) {
		srv := testserver.Start(t, testserver.Options{Config: app.Config{WebhookAllow: loopbackAllowed()}})
		n := askd.PersonNotify{Ntfy: "http://127.0.0.1:8080/topic", MailOff: true}
		if got, err := srv.Human().SetMyNotify(ctxT(t), n); err != nil || *got != n {
			t.Errorf("set = %+v, %v; want it allowed", got, err)
		}
	})
}

// loopbackAllowed is an operator's --webhook-allow 127.0.0.0/8.
func loopbackAllowed() askd.WebhookAllow {
	return askd.WebhookAllow{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}
