package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// ruleTokens stores the tokens rules name: agent tokens agent-1 and agent-2,
// human token reviewer.
func ruleTokens(t *testing.T, s askd.Store) {
	t.Helper()
	update(t, s, func(tx askd.Tx) error {
		for _, tok := range []*askd.Token{
			{Name: "agent-1", Role: askd.RoleAgent, Hash: hash("agent-1 token"), CreatedAt: at(0)},
			{Name: "agent-2", Role: askd.RoleAgent, Hash: hash("agent-2 token"), CreatedAt: at(0)},
			{Name: "reviewer", Role: askd.RoleHuman, Hash: hash("reviewer token"), CreatedAt: at(0)},
		} {
			if err := tx.Tokens.CreateToken(t.Context(), tok); err != nil {
				return err
			}
		}
		return nil
	})
}

// newRule is an allow rule of agent's session, made by reviewer at base,
// expiring after life.
func newRule(agent, session string, match askd.RuleMatch, life time.Duration) *askd.Rule {
	r := &askd.Rule{Agent: agent, Session: session, Match: match, Effect: askd.EffectAllow, AskID: 7,
		CreatedBy: "reviewer", CreatedAt: at(0), ExpiresAt: at(life)}
	switch match {
	case askd.MatchTitle:
		r.Title = "Run the migration?"
	case askd.MatchPrefix:
		r.Tool, r.Prefix = "Bash", "npm test"
	default:
		r.Tool = "Bash"
	}
	return r
}

// createRules stores the rules in one transaction, setting their ids.
func createRules(t *testing.T, s askd.Store, rules ...*askd.Rule) {
	t.Helper()
	update(t, s, func(tx askd.Tx) error {
		for _, r := range rules {
			if err := tx.Rules.CreateRule(t.Context(), r); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkRule fails the test unless got is want as a store gives it back.
func checkRule(t *testing.T, what string, got, want *askd.Rule) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil rule", what)
	}
	checkTime(t, what+": created_at", got.CreatedAt, want.CreatedAt)
	checkTime(t, what+": expires_at", got.ExpiresAt, want.ExpiresAt)
	checkTimePtr(t, what+": revoked_at", got.RevokedAt, want.RevokedAt)
	g, w := *got, *want
	for _, r := range []*askd.Rule{&g, &w} {
		r.CreatedAt, r.ExpiresAt, r.RevokedAt = time.Time{}, time.Time{}, nil
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, dump(&g), dump(&w))
	}
}

func ruleIDs(rules []*askd.Rule) []int64 {
	out := make([]int64, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

func findRules(t *testing.T, s askd.Store, f askd.RuleFilter) []*askd.Rule {
	t.Helper()
	var rules []*askd.Rule
	view(t, s, func(tx askd.Tx) (err error) {
		rules, err = tx.Rules.FindRules(t.Context(), f)
		return err
	})
	return rules
}

func testRuleRoundTrip(t *testing.T, s askd.Store) {
	ctx := t.Context()
	ruleTokens(t, s)
	rules := []*askd.Rule{
		newRule("agent-1", "s1", askd.MatchTool, time.Hour),
		newRule("agent-1", "s1", askd.MatchPrefix, 8*time.Hour),
		newRule("agent-1", "s1", askd.MatchTitle, 30*24*time.Hour),
	}
	rules[1].Effect = askd.EffectDeny
	createRules(t, s, rules...)
	for i, want := range rules {
		if want.ID == 0 || i > 0 && want.ID <= rules[i-1].ID {
			t.Fatalf("rule ids %v: want increasing, above 0", ruleIDs(rules))
		}
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.Rules.Rule(ctx, want.ID)
			if err != nil {
				return err
			}
			checkRule(t, "rule "+string(want.Match), got, want)
			return nil
		})
	}
	err := s.View(ctx, func(tx askd.Tx) error {
		_, err := tx.Rules.Rule(ctx, rules[2].ID+100)
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)
}

func testFindRules(t *testing.T, s askd.Store) {
	ctx := t.Context()
	ruleTokens(t, s)
	var (
		live    = newRule("agent-1", "s1", askd.MatchTool, time.Hour)
		expired = newRule("agent-1", "s1", askd.MatchTool, time.Minute)
		revoked = newRule("agent-1", "s1", askd.MatchTitle, time.Hour)
		other   = newRule("agent-1", "s2", askd.MatchTool, time.Hour)
		// Another agent token's session of the same name: another session.
		theirs = newRule("agent-2", "s1", askd.MatchTool, time.Hour)
	)
	createRules(t, s, live, expired, revoked, other, theirs)
	revoked.RevokedAt, revoked.RevokedBy = ptr(at(time.Second)), "reviewer"
	update(t, s, func(tx askd.Tx) error { return tx.Rules.UpdateRule(ctx, revoked) })

	tests := []struct {
		name string
		f    askd.RuleFilter
		want []*askd.Rule
	}{
		{"all", askd.RuleFilter{}, []*askd.Rule{live, expired, revoked, other, theirs}},
		{"one agent", askd.RuleFilter{Agent: "agent-1"}, []*askd.Rule{live, expired, revoked, other}},
		{"one session", askd.RuleFilter{Agent: "agent-1", Session: "s1"}, []*askd.Rule{live, expired, revoked}},
		{"a session name under every agent", askd.RuleFilter{Session: "s1"}, []*askd.Rule{live, expired, revoked, theirs}},
		{"live", askd.RuleFilter{Agent: "agent-1", Session: "s1", LiveAt: at(2 * time.Minute)}, []*askd.Rule{live}},
		{"live before one expired", askd.RuleFilter{Agent: "agent-1", Session: "s1", LiveAt: at(30 * time.Second)}, []*askd.Rule{live, expired}},
		// Expiry is strict: a rule expiring at t is not live at t.
		{"live at its expiry", askd.RuleFilter{Agent: "agent-1", Session: "s1", LiveAt: at(time.Minute)}, []*askd.Rule{live}},
		{"other agent's session", askd.RuleFilter{Agent: "agent-2", Session: "s1", LiveAt: at(2 * time.Minute)}, []*askd.Rule{theirs}},
		{"no such session", askd.RuleFilter{Agent: "agent-2", Session: "s2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findRules(t, s, tt.f)
			if got == nil {
				t.Fatalf("FindRules = nil, want an empty list")
			}
			if g, w := ruleIDs(got), ruleIDs(tt.want); !reflect.DeepEqual(g, w) {
				t.Fatalf("FindRules(%+v) = %v, want %v", tt.f, g, w)
			}
			for i := range got {
				checkRule(t, "found rule", got[i], tt.want[i])
			}
		})
	}
}

func testUpdateRule(t *testing.T, s askd.Store) {
	ctx := t.Context()
	ruleTokens(t, s)
	r := newRule("agent-1", "s1", askd.MatchPrefix, time.Hour)
	createRules(t, s, r)
	want := *r
	// Only the expiry and the revocation change, whatever else r says.
	r.ExpiresAt, r.RevokedAt, r.RevokedBy = at(2*time.Hour), ptr(at(time.Minute)), "reviewer"
	r.Prefix, r.Effect, r.Session = "rm -rf", askd.EffectDeny, "s2"
	want.ExpiresAt, want.RevokedAt, want.RevokedBy = r.ExpiresAt, r.RevokedAt, r.RevokedBy
	update(t, s, func(tx askd.Tx) error { return tx.Rules.UpdateRule(ctx, r) })
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Rules.Rule(ctx, r.ID)
		if err != nil {
			return err
		}
		checkRule(t, "updated rule", got, &want)
		return nil
	})
	missing := want
	missing.ID += 100
	err := s.Update(ctx, func(tx askd.Tx) error { return tx.Rules.UpdateRule(ctx, &missing) })
	wantCode(t, err, askd.ENOTFOUND)
}

// testRulesGoWithTokens: a rule needs its agent token and its maker's token,
// and goes when either is revoked; ids are not handed out again after.
func testRulesGoWithTokens(t *testing.T, s askd.Store) {
	ctx := t.Context()
	ruleTokens(t, s)
	for _, r := range []*askd.Rule{
		newRule("nobody", "s1", askd.MatchTool, time.Hour),
		func() *askd.Rule {
			r := newRule("agent-1", "s1", askd.MatchTool, time.Hour)
			r.CreatedBy = "nobody"
			return r
		}(),
	} {
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.Rules.CreateRule(ctx, r) })
		wantCode(t, err, askd.ENOTFOUND)
	}
	mine := newRule("agent-1", "s1", askd.MatchTool, time.Hour)
	theirs := newRule("agent-2", "s1", askd.MatchTool, time.Hour)
	createRules(t, s, mine, theirs)
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, "agent-1") })
	if got := ruleIDs(findRules(t, s, askd.RuleFilter{})); !reflect.DeepEqual(got, []int64{theirs.ID}) {
		t.Fatalf("rules after revoking agent-1 = %v, want only agent-2's %d", got, theirs.ID)
	}
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, "reviewer") })
	if got := findRules(t, s, askd.RuleFilter{}); len(got) != 0 {
		t.Fatalf("rules after revoking their maker = %v, want none", ruleIDs(got))
	}
	humanToken(t, s, "reviewer")
	again := newRule("agent-2", "s1", askd.MatchTool, time.Hour)
	createRules(t, s, again)
	if again.ID <= theirs.ID {
		t.Fatalf("rule id %d after %d was deleted: ids must never be handed out twice", again.ID, theirs.ID)
	}
}
