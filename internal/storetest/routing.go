package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// routed returns a with owner, escalated to escalatedTo ("" for not).
func routed(a *askd.Ask, owner, escalatedTo string) *askd.Ask {
	a.Owner = owner
	if escalatedTo != "" {
		a.EscalatedTo, a.EscalatedAt = escalatedTo, ptr(a.CreatedAt.Add(10*time.Minute))
	}
	return a
}

// routeFixture stores asks for the Routes tests and returns them by name,
// with their names by id.
//
//	name         owner          escalated to   status    deadline
//	mine         alice          -              pending   +20m
//	team         team:platform  -              pending   -
//	other        bob            -              pending   +10m
//	nobody's     -              -              pending   +30m
//	escalated    team:ops       alice          pending   -
//	teamLater    bob            team:platform  answered  -
//	opsDone      team:ops       -              answered  -
//	named        platform       -              pending   - (a person named as the team)
func routeFixture(t *testing.T, s askd.Store) (map[string]*askd.Ask, map[int64]string) {
	t.Helper()
	asks := map[string]*askd.Ask{
		"mine":      routed(withDeadline(newAsk(askd.KindQuestion, "s1", at(0)), at(20*time.Minute)), "alice", ""),
		"team":      routed(newAsk(askd.KindApproval, "s1", at(time.Second)), "team:platform", ""),
		"other":     routed(withDeadline(newAsk(askd.KindDecision, "s2", at(2*time.Second)), at(10*time.Minute)), "bob", ""),
		"nobody's":  routed(withDeadline(newAsk(askd.KindReady, "s2", at(3*time.Second)), at(30*time.Minute)), "", ""),
		"escalated": routed(newAsk(askd.KindApproval, "s3", at(4*time.Second)), "team:ops", "alice"),
		"teamLater": settled(routed(newAsk(askd.KindDecision, "s3", at(5*time.Second)), "bob", "team:platform"), "", at(time.Hour)),
		"opsDone":   settled(routed(newAsk(askd.KindQuestion, "s3", at(6*time.Second)), "team:ops", ""), askd.ReasonDismissed, at(time.Hour)),
		"named":     routed(newAsk(askd.KindAction, "s4", at(7*time.Second)), "platform", ""),
	}
	order := []string{"mine", "team", "other", "nobody's", "escalated", "teamLater", "opsDone", "named"}
	names := map[int64]string{}
	for _, name := range order {
		create(t, s, asks[name])
		names[asks[name].ID] = name
	}
	return asks, names
}

// aliceMine is the routes of alice's Mine: herself, her team, and nobody.
var aliceMine = []string{"alice", "team:platform", ""}

// testRoutes: FindAsks and CountAsks with Routes match an ask by its owner
// ("" for asks of no owner) or by whom it was escalated to, never by an
// empty escalated_to; an empty list matches nothing, nil everything.
func testRoutes(t *testing.T, s askd.Store) {
	ctx := t.Context()
	_, names := routeFixture(t, s)
	tests := []struct {
		name   string
		filter askd.AskFilter
		want   []string
		count  int // CountAsks, which ignores Limit
	}{
		{"a person's mine: own, team's, nobody's, escalated to them", askd.AskFilter{Routes: aliceMine},
			[]string{"escalated", "nobody's", "team", "mine", "teamLater"}, 5},
		{"a person alone", askd.AskFilter{Routes: []string{"alice"}}, []string{"escalated", "mine"}, 2},
		{"a team alone, escalated to it included", askd.AskFilter{Routes: []string{"team:platform"}}, []string{"team", "teamLater"}, 2},
		{"nobody's alone, no escalated_to matching", askd.AskFilter{Routes: []string{""}}, []string{"nobody's"}, 1},
		{"a team by its name alone is a person", askd.AskFilter{Routes: []string{"platform"}}, []string{"named"}, 1},
		{"another team, settled too", askd.AskFilter{Routes: []string{"team:ops"}}, []string{"escalated", "opsDone"}, 2},
		{"an empty list matches nothing", askd.AskFilter{Routes: []string{}}, nil, 0},
		{"nil matches everything", askd.AskFilter{},
			[]string{"named", "escalated", "nobody's", "other", "team", "mine", "opsDone", "teamLater"}, 8},
		{"with a status", askd.AskFilter{Routes: aliceMine, Status: askd.StatusAnswered}, []string{"teamLater"}, 1},
		{"with a session", askd.AskFilter{Routes: aliceMine, Session: "s1"}, []string{"team", "mine"}, 2},
		{"with a limit", askd.AskFilter{Routes: aliceMine, Limit: 2}, []string{"escalated", "nobody's"}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx askd.Tx) error {
				found, err := tx.Asks.FindAsks(ctx, tt.filter)
				if err != nil {
					return err
				}
				var got []string
				for _, a := range found {
					got = append(got, names[a.ID])
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("FindAsks(routes %q) = %q, want %q", tt.filter.Routes, got, tt.want)
				}
				n, err := tx.Asks.CountAsks(ctx, tt.filter)
				if err != nil {
					return err
				}
				if n != tt.count {
					t.Errorf("CountAsks(routes %q) = %d, want %d", tt.filter.Routes, n, tt.count)
				}
				return nil
			})
		})
	}
}

// testPendingRoutes: PendingAsks with Routes keeps urgency order and its
// paging, over the asks Routes matches.
func testPendingRoutes(t *testing.T, s askd.Store) {
	asks, names := routeFixture(t, s)
	tests := []struct {
		name  string
		query askd.PendingQuery
		want  []string
	}{
		{"a person's mine", askd.PendingQuery{Routes: aliceMine}, []string{"mine", "nobody's", "escalated", "team"}},
		{"after a dated ask", askd.PendingQuery{Routes: aliceMine, After: ptrKey(asks["mine"])}, []string{"nobody's", "escalated", "team"}},
		{"after the last dated ask, limited", askd.PendingQuery{Routes: aliceMine, After: ptrKey(asks["nobody's"]), Limit: 1}, []string{"escalated"}},
		{"a team", askd.PendingQuery{Routes: []string{"team:platform"}}, []string{"team"}},
		{"nobody's", askd.PendingQuery{Routes: []string{""}}, []string{"nobody's"}},
		{"an empty list", askd.PendingQuery{Routes: []string{}}, nil},
		{"with a kind", askd.PendingQuery{Routes: aliceMine, Kind: askd.KindApproval}, []string{"escalated", "team"}},
		{"nil: everyone's", askd.PendingQuery{}, []string{"other", "mine", "nobody's", "named", "escalated", "team"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, a := range pending(t, s, tt.query) {
				got = append(got, names[a.ID])
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("PendingAsks(routes %q) = %q, want %q", tt.query.Routes, got, tt.want)
			}
		})
	}
}

// testSessionRoutes: Sessions and CountSessionsWithAsks with Routes list
// the sessions that have asks Routes matches, counting only those asks,
// and page over them as over every session.
func testSessionRoutes(t *testing.T, s askd.Store) {
	ctx := t.Context()
	routeFixture(t, s)
	// s1: mine, team; s2: nobody's (other is bob's); s3: escalated,
	// teamLater (settled; opsDone is team:ops'); s4: named (a person).
	counted := func(ss []*askd.SessionInfo) []string {
		out := make([]string, len(ss))
		for i, si := range ss {
			out[i] = fmt.Sprintf("%s/%s %d/%d", si.Agent, si.Name, si.Pending, si.Total)
		}
		return out
	}
	tests := []struct {
		name   string
		routes []string
		want   []string
	}{
		{"a person's mine", aliceMine, []string{"agent-1/s1 2/2", "agent-1/s2 1/1", "agent-1/s3 1/2"}},
		{"a team", []string{"team:ops"}, []string{"agent-1/s3 1/2"}},
		{"a person named as the team", []string{"platform"}, []string{"agent-1/s4 1/1"}},
		{"an empty list", []string{}, []string{}},
		{"nil: every ask", nil, []string{"agent-1/s1 2/2", "agent-1/s2 2/2", "agent-1/s3 1/3", "agent-1/s4 1/1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx askd.Tx) error {
				all, err := tx.Sessions.Sessions(ctx, askd.SessionQuery{Routes: tt.routes})
				if err != nil {
					return err
				}
				if got := counted(all); !slices.Equal(got, tt.want) {
					t.Errorf("Sessions(routes %q) = %q, want %q", tt.routes, got, tt.want)
				}
				n, err := tx.Sessions.CountSessionsWithAsks(ctx, tt.routes)
				if err != nil {
					return err
				}
				if n != len(tt.want) {
					t.Errorf("CountSessionsWithAsks(%q) = %d, want %d", tt.routes, n, len(tt.want))
				}
				// Paged one at a time, the same sessions and counts.
				var paged []*askd.SessionInfo
				var after *askd.SessionKey
				for range 10 {
					page, err := tx.Sessions.Sessions(ctx, askd.SessionQuery{Routes: tt.routes, After: after, Limit: 1})
					if err != nil {
						return err
					}
					if len(page) == 0 {
						break
					}
					paged = append(paged, page...)
					after = &askd.SessionKey{Agent: page[0].Agent, Name: page[0].Name}
				}
				if got := counted(paged); !slices.Equal(got, tt.want) {
					t.Errorf("Sessions(routes %q) by pages of one = %q, want %q", tt.routes, got, tt.want)
				}
				return nil
			})
		})
	}
}

// testEscalateDue: the sweep finds the pending, unclaimed asks of a team
// with an escalation that are not snoozed at the time given, not escalated
// yet, and were last revised at least the team's escalate_after before it;
// each condition alone keeps an ask out.
func testEscalateDue(t *testing.T, s askd.Store) {
	ctx := t.Context()
	update(t, s, func(tx askd.Tx) error {
		for _, tm := range []*askd.Team{
			{Name: "platform", EscalateAfter: 10 * time.Minute, EscalateTo: "carol", CreatedAt: at(0)},
			{Name: "slow", EscalateAfter: time.Hour, EscalateTo: "carol", CreatedAt: at(0)},
			{Name: "quiet", CreatedAt: at(0)},
		} {
			if err := tx.Teams.CreateTeam(ctx, tm); err != nil {
				return err
			}
		}
		return nil
	})
	// The sweep runs at +15m: platform's asks revised at +5m or before are due.
	due := at(15 * time.Minute)
	ask := func(owner string, revised time.Duration) *askd.Ask {
		a := routed(newAsk(askd.KindApproval, "s1", at(0)), owner, "")
		a.UpdatedAt = at(revised)
		return a
	}
	asks := map[string]*askd.Ask{
		"due":                        ask("team:platform", 0),
		"due just now":               ask("team:platform", 5*time.Minute),
		"snooze over just now":       ask("team:platform", 0),
		"snooze over long ago":       ask("team:platform", 0),
		"revised too late":           ask("team:platform", 5*time.Minute+time.Microsecond),
		"revised since":              ask("team:platform", 12*time.Minute),
		"claimed":                    ask("team:platform", 0),
		"snoozed":                    ask("team:platform", 0),
		"escalated already":          ask("team:platform", 0),
		"settled":                    settled(ask("team:platform", 0), "", at(time.Minute)),
		"owned by a person":          ask("alice", 0),
		"a person named as the team": ask("platform", 0),
		"team waits longer":          ask("team:slow", 0),
		"team never escalates":       ask("team:quiet", 0),
		"team not there":             ask("team:gone", 0),
		"nobody's":                   ask("", 0),
	}
	asks["snooze over just now"].SnoozedUntil = ptr(due)
	asks["snooze over long ago"].SnoozedUntil = ptr(at(time.Minute))
	asks["claimed"].ClaimedBy, asks["claimed"].ClaimedAt = "alice", ptr(at(time.Minute))
	asks["snoozed"].SnoozedUntil = ptr(due.Add(time.Microsecond))
	asks["escalated already"].EscalatedTo, asks["escalated already"].EscalatedAt = "carol", ptr(at(10*time.Minute))
	names := map[int64]string{}
	for name, a := range asks {
		create(t, s, a)
		names[a.ID] = name
	}
	want := []string{"due", "due just now", "snooze over just now", "snooze over long ago"}

	for _, f := range []askd.AskFilter{
		{EscalateDue: due},
		{EscalateDue: due, Status: askd.StatusPending},
	} {
		view(t, s, func(tx askd.Tx) error {
			found, err := tx.Asks.FindAsks(ctx, f)
			if err != nil {
				return err
			}
			var got []string
			for i, a := range found {
				got = append(got, names[a.ID])
				if i > 0 && a.ID >= found[i-1].ID {
					t.Errorf("FindAsks(EscalateDue) not newest first: %d after %d", a.ID, found[i-1].ID)
				}
				checkAsk(t, names[a.ID], a, asks[names[a.ID]])
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("FindAsks(%+v) = %q, want %q", f, got, want)
			}
			n, err := tx.Asks.CountAsks(ctx, f)
			if err != nil {
				return err
			}
			if n != len(want) {
				t.Errorf("CountAsks(%+v) = %d, want %d", f, n, len(want))
			}
			limited, err := tx.Asks.FindAsks(ctx, askd.AskFilter{EscalateDue: due, Limit: 1})
			if err != nil {
				return err
			}
			if len(limited) != 1 || limited[0].ID != found[0].ID {
				t.Errorf("FindAsks(EscalateDue, limit 1) = %v, want [%d]", ids(limited), found[0].ID)
			}
			return nil
		})
	}

	t.Run("none before anything is due", func(t *testing.T) {
		view(t, s, func(tx askd.Tx) error {
			n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{EscalateDue: at(10*time.Minute - time.Microsecond)})
			if err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("CountAsks(EscalateDue just before the first is due) = %d, want 0", n)
			}
			return nil
		})
	})
	t.Run("a settled status finds none", func(t *testing.T) {
		view(t, s, func(tx askd.Tx) error {
			n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{EscalateDue: due, Status: askd.StatusAnswered})
			if err != nil {
				return err
			}
			if n != 0 {
				t.Errorf("CountAsks(EscalateDue, answered) = %d, want 0", n)
			}
			return nil
		})
	})
	count := func(t *testing.T) int {
		t.Helper()
		var n int
		view(t, s, func(tx askd.Tx) (err error) {
			n, err = tx.Asks.CountAsks(ctx, askd.AskFilter{EscalateDue: due})
			return err
		})
		return n
	}
	t.Run("the team's escalation as it is now", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Teams.SetEscalation(ctx, "platform", 20*time.Minute, "carol") })
		if n := count(t); n != 0 {
			t.Errorf("CountAsks(EscalateDue) once the team waits 20m = %d, want 0", n)
		}
		update(t, s, func(tx askd.Tx) error { return tx.Teams.SetEscalation(ctx, "platform", 10*time.Minute, "carol") })
		if n := count(t); n != len(want) {
			t.Errorf("CountAsks(EscalateDue) once the team waits 10m again = %d, want %d", n, len(want))
		}
	})
	t.Run("escalated once, by a write transaction", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error {
			found, err := tx.Asks.FindAsks(ctx, askd.AskFilter{EscalateDue: due})
			if err != nil {
				return err
			}
			if len(found) != len(want) {
				t.Errorf("FindAsks(EscalateDue) in a write transaction = %d asks, want %d", len(found), len(want))
			}
			for _, a := range found {
				a.EscalatedTo, a.EscalatedAt = "carol", ptr(due)
				if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
					return err
				}
			}
			return nil
		})
		if n := count(t); n != 0 {
			t.Errorf("CountAsks(EscalateDue) after escalating = %d, want 0", n)
		}
	})
}
