package storetest

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// roundTripAsks returns, new at each call, asks of every kind that between
// them set every field of askd.Ask and askd.Answer.
func roundTripAsks() []struct {
	name string
	ask  *askd.Ask
} {
	return []struct {
		name string
		ask  *askd.Ask
	}{
		{"question answered, single and multi-select", &askd.Ask{
			Kind: askd.KindQuestion, Session: "repo-main", Agent: "agent-1", Status: askd.StatusAnswered, Revision: 1,
			Questions: []askd.Question{
				{
					Question: "Which database?", Header: "Database",
					Options: []askd.Option{
						{Label: "SQLite", Description: "embedded, zero setup", Preview: "## SQLite\n\n`--db ./askd.db`"},
						{Label: "Postgres", Description: "shared, scales out", Preview: "<b>PostgreSQL</b> & \"friends\""},
					},
				},
				{
					Question: "Which checks?", Header: "Checks", MultiSelect: true,
					Options: []askd.Option{{Label: "lint"}, {Label: "tests"}, {Label: "vet", Description: "go vet"}},
				},
			},
			CreatedAt: at(0), UpdatedAt: at(2 * time.Minute), Deadline: ptr(at(5 * time.Minute)),
			SettledAt: ptr(at(2 * time.Minute)), SettledBy: "reviewer",
			Answer: &askd.Answer{
				Answers: map[string]askd.Choice{
					"Which database?": {Values: []string{"SQLite"}},
					"Which checks?":   {Values: []string{"lint", "tests"}, Multi: true},
				},
				Response: "and keep it small",
			},
		}},
		{"question pending, one question, own unicode text", &askd.Ask{
			Kind: askd.KindQuestion, Session: "ci/job 42", Agent: "agent-2", Status: askd.StatusPending, Revision: 1,
			Questions: []askd.Question{{
				Question: "Welche Datenbank? 数据库 🚀", Header: "Datenbank",
				Options: []askd.Option{{Label: "ja"}, {Label: "nein"}},
			}},
			CreatedAt: at(time.Second), UpdatedAt: at(time.Second),
		}},
		{"decision pending, snoozed, replaced twice", &askd.Ask{
			Kind: askd.KindDecision, Session: "repo-main", Agent: "agent-1", Status: askd.StatusPending, Revision: 3,
			Title: "Merge the branch?", Details: "All tests pass.\nCoverage 81%.",
			Options: []askd.Option{
				{Label: "merge", Description: "now"}, {Label: "wait"}, {Label: "close", Description: "drop it"},
			},
			Recommended: "merge", ToBeTold: true,
			CreatedAt: at(time.Minute), UpdatedAt: at(3 * time.Minute), SnoozedUntil: ptr(at(time.Hour)),
		}},
		{"decision answered in own words and told", &askd.Ask{
			Kind: askd.KindDecision, Session: "repo-main", Agent: "agent-1", Status: askd.StatusAnswered, Revision: 1,
			Title: "Release today?", Options: []askd.Option{{Label: "yes"}, {Label: "no"}},
			Key:       "session:repo-main", // derived; set here so that every field is covered
			CreatedAt: at(0), UpdatedAt: at(10 * time.Minute),
			SettledAt: ptr(at(9 * time.Minute)), SettledBy: "reviewer", Answer: &askd.Answer{Answer: "after lunch"},
			ToBeTold: true, ToldAt: ptr(at(10 * time.Minute)),
		}},
		{"action dismissed with a reply", &askd.Ask{
			Kind: askd.KindAction, Session: "s1", Agent: "agent-1", Status: askd.StatusCancelled, Revision: 1,
			Title: "Rotate the key", CancelReason: askd.ReasonDismissed, ToBeTold: true,
			CreatedAt: at(0), UpdatedAt: at(time.Minute), SettledAt: ptr(at(time.Minute)), SettledBy: "reviewer",
			Answer: &askd.Answer{Response: "not now"},
		}},
		{"ready timed out", &askd.Ask{
			Kind: askd.KindReady, Session: "s1", Agent: "agent-1", Status: askd.StatusCancelled, Revision: 1,
			Title: "Review the draft", CancelReason: askd.ReasonTimeout,
			CreatedAt: at(0), UpdatedAt: at(time.Hour), Deadline: ptr(at(time.Hour)), SettledAt: ptr(at(time.Hour)),
		}},
		{"blocked withdrawn by its agent", &askd.Ask{
			Kind: askd.KindBlocked, Session: "s2", Agent: "agent-3", Status: askd.StatusCancelled, Revision: 2,
			Title: "Need credentials", Details: "for the staging database",
			CancelReason: askd.ReasonWithdrawn, SettledBy: "agent-3",
			CreatedAt: at(0), UpdatedAt: at(time.Minute), SettledAt: ptr(at(time.Minute)),
		}},
		{"approval modified", &askd.Ask{
			Kind: askd.KindApproval, Session: "s2", Agent: "agent-3", Status: askd.StatusAnswered, Revision: 1,
			Title: "Run a command", Details: "rm -rf build",
			Payload:  json.RawMessage(`{ "command": "rm -rf build", "env": {"CI": true}, "n": [1, 2.5, null], "s": "<&>" }`),
			ToolName: "Bash", ToolUseID: "toolu_01", ToBeTold: true,
			CreatedAt: at(0), UpdatedAt: at(time.Minute), Deadline: ptr(at(5 * time.Minute)),
			SettledAt: ptr(at(time.Minute)), SettledBy: "reviewer",
			Answer: &askd.Answer{
				Decision: askd.DecisionModified,
				Payload:  json.RawMessage(`{"command": "rm -rf build/tmp"}`),
				Comment:  "narrower",
			},
		}},
		{"approval rejected, its agent owned by a person", &askd.Ask{
			Kind: askd.KindApproval, Session: "s2", Agent: "agent-3", Status: askd.StatusAnswered, Revision: 1,
			Title: "Push to main", Owner: "bob", CreatedAt: at(0), UpdatedAt: at(time.Minute),
			SettledAt: ptr(at(time.Minute)), SettledBy: "reviewer",
			Answer: &askd.Answer{Decision: askd.DecisionRejected, Comment: "open a PR"},
		}},
		{"form answered, schema kept as given", &askd.Ask{
			Kind: askd.KindForm, Session: "s3", Agent: "agent-1", Status: askd.StatusAnswered, Revision: 1,
			Title:     "Which day?\nPick one.",
			Source:    "calendar",
			Schema:    json.RawMessage(`{"type": "object", "properties": {"z": {"type": "integer", "maximum": 100}, "a": {"type": "string", "default": "x"}}, "required": ["z"]}`),
			CreatedAt: at(0), UpdatedAt: at(time.Minute), Deadline: ptr(at(5 * time.Minute)),
			SettledAt: ptr(at(time.Minute)), SettledBy: "reviewer",
			Answer: &askd.Answer{Action: askd.FormAccept, Content: map[string]any{"z": 42.0, "a": "Wednesday", "m": []any{"x", "y"}, "b": true}},
			ToldAt: ptr(at(time.Minute)),
		}},
		{"form in url mode, declined", &askd.Ask{
			Kind: askd.KindForm, Session: "s3", Agent: "agent-1", Status: askd.StatusAnswered, Revision: 1,
			Title: "Sign in to GitHub", Source: "github", URL: "https://github.com/login/device?code=AB-12",
			CreatedAt: at(0), UpdatedAt: at(time.Minute),
			SettledAt: ptr(at(time.Minute)), SettledBy: "reviewer",
			Answer: &askd.Answer{Action: askd.FormDecline},
		}},
		{"approval from a CLI's hook, no edit", &askd.Ask{
			Kind: askd.KindApproval, Session: "s3", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
			Title: "Allow Bash: make test", Payload: json.RawMessage(`{"command":"make test"}`),
			ToolName: "Bash", ToolUseID: "call-7", AgentTool: "run_shell_command", NoEdit: true,
			CreatedAt: at(0), UpdatedAt: at(0),
		}},
		{"approval keyed for one call, approved and told", &askd.Ask{
			Kind: askd.KindApproval, Session: "s3", Agent: "agent-1", Status: askd.StatusAnswered, Revision: 1,
			Title: "Call write_file on fs", Source: "fs", Key: "mcp-gate 0f1e2d", OneCall: true,
			CreatedAt: at(0), UpdatedAt: at(time.Minute), SettledAt: ptr(at(time.Minute)), SettledBy: "reviewer",
			Answer: &askd.Answer{Decision: askd.DecisionApproved}, ToldAt: ptr(at(time.Minute)),
		}},
		{"approval pending, no payload", &askd.Ask{
			Kind: askd.KindApproval, Session: "s3", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
			Title: "Deploy", CreatedAt: at(0), UpdatedAt: at(0),
		}},
		{"approval pending, needing a quorum, approved once", &askd.Ask{
			Kind: askd.KindApproval, Session: "s5", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
			Title: "Deploy", Payload: json.RawMessage(`{"env":"prod"}`), Owner: "alice",
			ApprovalsNeeded: 3, ExcludeOwner: true,
			Approvals: []askd.Approval{{By: "bob", At: stored(at(time.Minute)), Payload: json.RawMessage(`{"env":"staging"}`)}, {By: "carol", At: stored(at(2 * time.Minute))}},
			CreatedAt: at(0), UpdatedAt: at(2 * time.Minute),
		}},
		{"decision pending, routed to a team, claimed and escalated", &askd.Ask{
			Kind: askd.KindDecision, Session: "s4", Agent: "agent-4", Status: askd.StatusPending, Revision: 1,
			Title: "Roll back?", Options: []askd.Option{{Label: "yes"}, {Label: "no"}},
			Owner: "team:platform", ClaimedBy: "alice", ClaimedAt: ptr(at(11 * time.Minute)),
			EscalatedTo: "team:ops", EscalatedAt: ptr(at(10 * time.Minute)),
			CreatedAt: at(0), UpdatedAt: at(0),
		}},
	}
}

func testAskRoundTrip(t *testing.T, s askd.Store) {
	ctx := t.Context()
	cases := roundTripAsks()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			create(t, s, c.ask)
			if c.ask.ID <= 0 {
				t.Fatalf("CreateAsk set id %d, want > 0", c.ask.ID)
			}
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Asks.Ask(ctx, c.ask.ID)
				if err != nil {
					return err
				}
				checkAsk(t, "Ask", got, c.ask)
				found, err := tx.Asks.FindAsks(ctx, askd.AskFilter{ID: c.ask.ID})
				if err != nil {
					return err
				}
				if len(found) != 1 {
					t.Fatalf("FindAsks(id %d) = %d asks, want 1", c.ask.ID, len(found))
				}
				checkAsk(t, "FindAsks", found[0], c.ask)
				return nil
			})
		})
	}

	// Every field must be exercised by some case, so that a field added to
	// Ask or Answer fails here until each store keeps it.
	t.Run("covers every field", func(t *testing.T) {
		asks := make([]any, len(cases))
		var answers []any
		for i, c := range cases {
			asks[i] = c.ask
			if c.ask.Answer != nil {
				answers = append(answers, c.ask.Answer)
			}
		}
		checkCovered(t, asks)
		checkCovered(t, answers)
	})

	t.Run("ids increase", func(t *testing.T) {
		var got []int64
		for _, c := range cases {
			got = append(got, c.ask.ID)
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("ids in creation order = %v, want increasing", got)
		}
	})
}

// checkCovered fails the test for each field of the structs (all pointers to
// one struct type) that none of them sets.
func checkCovered(t *testing.T, values []any) {
	t.Helper()
	if len(values) == 0 {
		t.Fatal("no values")
	}
	typ := reflect.TypeOf(values[0]).Elem()
	for i := range typ.NumField() {
		set := false
		for _, v := range values {
			if !reflect.ValueOf(v).Elem().Field(i).IsZero() {
				set = true
				break
			}
		}
		if !set {
			t.Errorf("no round-trip case sets %s.%s", typ.Name(), typ.Field(i).Name)
		}
	}
}

func testUpdateAsk(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := newAsk(askd.KindDecision, "s1", at(0))
	a.Options = []askd.Option{{Label: "a"}, {Label: "b"}}
	a.Deadline = ptr(at(time.Hour))
	a.ToBeTold = true
	a.Owner = "team:platform"
	other := newAsk(askd.KindQuestion, "s1", at(0))
	create(t, s, a, other)
	otherBefore := *other

	tests := []struct {
		name   string
		change func(a *askd.Ask)
	}{
		{"replaced by a newer attention ask", func(a *askd.Ask) {
			a.Revision++
			a.Title, a.Details = "Newer title", "newer details"
			a.Options = []askd.Option{{Label: "x"}, {Label: "y"}, {Label: "z"}}
			a.Recommended = "y"
			a.UpdatedAt = at(time.Minute)
		}},
		{"snoozed", func(a *askd.Ask) {
			a.SnoozedUntil = ptr(at(2 * time.Hour))
			a.UpdatedAt = at(2 * time.Minute)
		}},
		{"escalated", func(a *askd.Ask) {
			a.EscalatedTo, a.EscalatedAt = "carol", ptr(at(130*time.Second))
		}},
		{"claimed", func(a *askd.Ask) {
			a.ClaimedBy, a.ClaimedAt = "alice", ptr(at(140*time.Second))
		}},
		{"asked by a CLI's hook", func(a *askd.Ask) {
			a.AgentTool, a.NoEdit = "bash", true
		}},
		{"approved in part", func(a *askd.Ask) {
			a.ApprovalsNeeded, a.ExcludeOwner = 2, true
			a.Approvals = []askd.Approval{{By: "bob", At: stored(at(150 * time.Second))}}
		}},
		{"answered", func(a *askd.Ask) {
			a.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "y"}, "reviewer", at(3*time.Minute))
		}},
		{"told", func(a *askd.Ask) {
			a.ToldAt = ptr(at(4 * time.Minute))
			a.UpdatedAt = at(4 * time.Minute)
		}},
		{"optional fields cleared", func(a *askd.Ask) {
			a.Deadline, a.SnoozedUntil, a.ToldAt = nil, nil, nil
			a.Options, a.Recommended, a.Details = nil, "", ""
			a.ToBeTold = false
			a.Owner, a.ClaimedBy, a.ClaimedAt, a.EscalatedTo, a.EscalatedAt = "", "", nil, "", nil
			a.ApprovalsNeeded, a.Approvals, a.ExcludeOwner = 0, nil, false
			a.AgentTool, a.NoEdit = "", false
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change(a)
			update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, a) })
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Asks.Ask(ctx, a.ID)
				if err != nil {
					return err
				}
				checkAsk(t, "updated", got, a)
				got, err = tx.Asks.Ask(ctx, other.ID)
				if err != nil {
					return err
				}
				checkAsk(t, "other ask", got, &otherBefore)
				return nil
			})
		})
	}
}

func testNotFound(t *testing.T, s askd.Store) {
	ctx := t.Context()
	existing := newAsk(askd.KindQuestion, "s1", at(0))
	create(t, s, existing)
	missing := existing.ID + 1000

	tests := []struct {
		name  string
		write bool
		do    func(tx askd.Tx) error
	}{
		{"Ask", false, func(tx askd.Tx) error {
			a, err := tx.Asks.Ask(ctx, missing)
			if a != nil {
				t.Errorf("Ask returned %+v with the error", a)
			}
			return err
		}},
		{"UpdateAsk", true, func(tx askd.Tx) error {
			a := newAsk(askd.KindQuestion, "s1", at(0))
			a.ID = missing
			return tx.Asks.UpdateAsk(ctx, a)
		}},
		{"AddEvent without snapshot", true, func(tx askd.Tx) error {
			return tx.Events.AddEvent(ctx, &askd.Event{AskID: missing, Session: "s1", Action: askd.ActionCreated, At: at(0)})
		}},
		{"AddEvent with snapshot", true, func(tx askd.Tx) error {
			a := newAsk(askd.KindQuestion, "s1", at(0))
			a.ID = missing
			return tx.Events.AddEvent(ctx, &askd.Event{AskID: missing, Session: "s1", Action: askd.ActionCreated, At: at(0), Ask: a})
		}},
		{"TokenByHash", false, func(tx askd.Tx) error {
			tok, err := tx.Tokens.TokenByHash(ctx, "0000")
			if tok != nil {
				t.Errorf("TokenByHash returned %+v with the error", tok)
			}
			return err
		}},
		{"RevokeToken", true, func(tx askd.Tx) error {
			return tx.Tokens.RevokeToken(ctx, "nobody")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := s.View
			if tt.write {
				run = s.Update
			}
			wantCode(t, run(ctx, tt.do), askd.ENOTFOUND)
		})
	}

	t.Run("nothing changed", func(t *testing.T) {
		view(t, s, func(tx askd.Tx) error {
			n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{})
			if err != nil {
				return err
			}
			last, err := tx.Events.LastEventID(ctx)
			if err != nil {
				return err
			}
			if n != 1 || last != 0 {
				t.Errorf("after failed writes: %d asks, last event %d; want 1 and 0", n, last)
			}
			return nil
		})
	})
}

// findFixture stores asks for the filter tests and returns them by name.
//
//	name  session kind      status     deadline settled tool_use_id
//	q1    s1      question  pending    +10m     -       -
//	d2    s1      decision  answered   -        +1h     -
//	a3    s2      approval  pending    +5m      -       toolu_1
//	q4    s2      question  cancelled  +1m      +2h     -
//	a5    s1      approval  pending    +30m     -       toolu_2
//	x6    s3      action    cancelled  -        +3h     -
//
// Pending first, then newest: a5 a3 q1 x6 q4 d2.
func findFixture(t *testing.T, s askd.Store) map[string]*askd.Ask {
	t.Helper()
	q1 := newAsk(askd.KindQuestion, "s1", at(0))
	q1.Deadline = ptr(at(10 * time.Minute))
	d2 := settled(newAsk(askd.KindDecision, "s1", at(time.Second)), "", at(time.Hour))
	a3 := newAsk(askd.KindApproval, "s2", at(2*time.Second))
	a3.Deadline, a3.ToolUseID = ptr(at(5*time.Minute)), "toolu_1"
	q4 := settled(newAsk(askd.KindQuestion, "s2", at(3*time.Second)), askd.ReasonTimeout, at(2*time.Hour))
	q4.Deadline = ptr(at(time.Minute))
	a5 := newAsk(askd.KindApproval, "s1", at(4*time.Second))
	a5.Deadline, a5.ToolUseID = ptr(at(30*time.Minute)), "toolu_2"
	// Another token's session of the same name as q1's: another session.
	x6 := byAgent(settled(newAsk(askd.KindAction, "s1", at(5*time.Second)), askd.ReasonDismissed, at(3*time.Hour)), "agent-2")
	create(t, s, q1, d2, a3, q4, a5, x6)
	return map[string]*askd.Ask{"q1": q1, "d2": d2, "a3": a3, "q4": q4, "a5": a5, "x6": x6}
}

// filterCases are AskFilters over findFixture with the asks FindAsks must
// return, in order, and how many CountAsks must count.
func filterCases(asks map[string]*askd.Ask) []struct {
	name   string
	filter askd.AskFilter
	want   []string
	count  int
} {
	return []struct {
		name   string
		filter askd.AskFilter
		want   []string
		count  int
	}{
		{"all: pending first, then newest", askd.AskFilter{}, []string{"a5", "a3", "q1", "x6", "q4", "d2"}, 6},
		{"id", askd.AskFilter{ID: asks["a3"].ID}, []string{"a3"}, 1},
		{"id that matches nothing", askd.AskFilter{ID: asks["x6"].ID + 100}, nil, 0},
		{"status pending", askd.AskFilter{Status: askd.StatusPending}, []string{"a5", "a3", "q1"}, 3},
		{"status answered", askd.AskFilter{Status: askd.StatusAnswered}, []string{"d2"}, 1},
		{"status cancelled", askd.AskFilter{Status: askd.StatusCancelled}, []string{"x6", "q4"}, 2},
		{"session name, any agent", askd.AskFilter{Session: "s1"}, []string{"a5", "q1", "x6", "d2"}, 4},
		{"agent", askd.AskFilter{Agent: "agent-2"}, []string{"x6"}, 1},
		{"agent and session", askd.AskFilter{Agent: "agent-1", Session: "s1"}, []string{"a5", "q1", "d2"}, 3},
		{"another agent's session of the name", askd.AskFilter{Agent: "agent-2", Session: "s2"}, nil, 0},
		{"agent and status", askd.AskFilter{Agent: "agent-1", Status: askd.StatusPending}, []string{"a5", "a3", "q1"}, 3},
		{"session nobody has", askd.AskFilter{Session: "nobody"}, nil, 0},
		{"kind", askd.AskFilter{Kind: askd.KindQuestion}, []string{"q1", "q4"}, 2},
		{"kind and session", askd.AskFilter{Kind: askd.KindApproval, Session: "s2"}, []string{"a3"}, 1},
		{"session, kind and status", askd.AskFilter{Session: "s2", Kind: askd.KindQuestion, Status: askd.StatusPending}, nil, 0},
		{"tool use id", askd.AskFilter{ToolUseID: "toolu_1"}, []string{"a3"}, 1},
		{"tool use id and status", askd.AskFilter{ToolUseID: "toolu_2", Status: askd.StatusPending}, []string{"a5"}, 1},
		{"before an id", askd.AskFilter{Before: asks["a5"].ID}, []string{"a3", "q1", "q4", "d2"}, 4},
		{"limit", askd.AskFilter{Limit: 2}, []string{"a5", "a3"}, 6},
		{"limit above the matches", askd.AskFilter{Limit: 50}, []string{"a5", "a3", "q1", "x6", "q4", "d2"}, 6},
		{"before and limit: the next page", askd.AskFilter{Before: asks["q4"].ID, Limit: 2}, []string{"a3", "q1"}, 3},
		{"settled before", askd.AskFilter{SettledBefore: at(150 * time.Minute)}, []string{"q4", "d2"}, 2},
		{"settled before is strict", askd.AskFilter{SettledBefore: at(time.Hour)}, nil, 0},
		{"settled before, just after", askd.AskFilter{SettledBefore: at(time.Hour + time.Microsecond)}, []string{"d2"}, 1},
		{"deadline before, any status", askd.AskFilter{DeadlineBefore: at(15 * time.Minute)}, []string{"a3", "q1", "q4"}, 3},
		{"deadline before, pending", askd.AskFilter{DeadlineBefore: at(15 * time.Minute), Status: askd.StatusPending}, []string{"a3", "q1"}, 2},
		{"deadline before is strict", askd.AskFilter{DeadlineBefore: at(5 * time.Minute), Status: askd.StatusPending}, nil, 0},
	}
}

func testFindAsks(t *testing.T, s askd.Store) {
	ctx := t.Context()
	asks := findFixture(t, s)
	for _, tt := range filterCases(asks) {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Asks.FindAsks(ctx, tt.filter)
				if err != nil {
					return err
				}
				want := make([]int64, len(tt.want))
				for i, name := range tt.want {
					want[i] = asks[name].ID
				}
				if !slices.Equal(ids(got), want) {
					t.Errorf("FindAsks(%+v) = ids %v, want %v %v", tt.filter, ids(got), want, tt.want)
				}
				for i, a := range got {
					if i < len(tt.want) && a.ID == asks[tt.want[i]].ID {
						checkAsk(t, tt.want[i], a, asks[tt.want[i]])
					}
				}
				return nil
			})
		})
	}
}

func testCountAsks(t *testing.T, s askd.Store) {
	ctx := t.Context()
	asks := findFixture(t, s)
	for _, tt := range filterCases(asks) {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx askd.Tx) error {
				n, err := tx.Asks.CountAsks(ctx, tt.filter)
				if err != nil {
					return err
				}
				if n != tt.count {
					t.Errorf("CountAsks(%+v) = %d, want %d", tt.filter, n, tt.count)
				}
				return nil
			})
		})
	}
}

func testDeleteAsks(t *testing.T, s askd.Store) {
	ctx := t.Context()
	old := settled(newAsk(askd.KindQuestion, "s1", at(-48*time.Hour)), "", at(-47*time.Hour))
	oldCancelled := settled(newAsk(askd.KindDecision, "s2", at(-48*time.Hour)), askd.ReasonTimeout, at(-25*time.Hour))
	recent := settled(newAsk(askd.KindApproval, "s1", at(-2*time.Hour)), "", at(-time.Hour))
	oldPending := newAsk(askd.KindReady, "s1", at(-72*time.Hour))
	create(t, s, old, oldCancelled, recent, oldPending)
	all := []*askd.Ask{old, oldCancelled, recent, oldPending}
	update(t, s, func(tx askd.Tx) error {
		for _, a := range all {
			for _, action := range []string{askd.ActionCreated, askd.ActionAnswered} {
				if err := tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: a.Session, Action: action, Actor: "x", At: a.CreatedAt, Ask: a}); err != nil {
					return err
				}
			}
		}
		return nil
	})

	var deleted int
	update(t, s, func(tx askd.Tx) error {
		var err error
		deleted, err = tx.Asks.DeleteAsks(ctx, purgeBefore(at(-24*time.Hour)), 1000)
		return err
	})
	if deleted != 2 {
		t.Errorf("DeleteAsks = %d, want 2", deleted)
	}

	view(t, s, func(tx askd.Tx) error {
		for _, a := range []*askd.Ask{old, oldCancelled} {
			_, err := tx.Asks.Ask(ctx, a.ID)
			wantCode(t, err, askd.ENOTFOUND)
			events, err := tx.Events.AskHistory(ctx, a.ID)
			if err != nil {
				return err
			}
			if len(events) != 0 {
				t.Errorf("deleted ask %d still has %d events", a.ID, len(events))
			}
		}
		got, err := tx.Asks.FindAsks(ctx, askd.AskFilter{})
		if err != nil {
			return err
		}
		if want := []int64{oldPending.ID, recent.ID}; !slices.Equal(ids(got), want) {
			t.Errorf("asks left = %v, want %v (the pending one and the recent one)", ids(got), want)
		}
		events, err := tx.Events.EventsAfter(ctx, 0, 0)
		if err != nil {
			return err
		}
		for _, e := range events {
			if e.AskID != recent.ID && e.AskID != oldPending.ID {
				t.Errorf("event %d of deleted ask %d is left", e.ID, e.AskID)
			}
		}
		if len(events) != 4 {
			t.Errorf("%d events left, want 4", len(events))
		}
		return nil
	})

	update(t, s, func(tx askd.Tx) error {
		var err error
		deleted, err = tx.Asks.DeleteAsks(ctx, purgeBefore(at(-24*time.Hour)), 1000)
		return err
	})
	if deleted != 0 {
		t.Errorf("DeleteAsks again = %d, want 0", deleted)
	}
}

func testIDsNeverReused(t *testing.T, s askd.Store) {
	ctx := t.Context()
	first := newAsk(askd.KindQuestion, "s1", at(0))
	newest := settled(newAsk(askd.KindQuestion, "s1", at(time.Second)), "", at(time.Minute))
	create(t, s, first, newest)
	// Event ids are read once the update is over: a store may send an
	// event's insert with the commit (askd.EventTx.AddEvent).
	last := &askd.Event{AskID: newest.ID, Session: "s1", Action: askd.ActionAnswered, At: at(time.Minute)}
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Events.AddEvent(ctx, last); err != nil {
			return err
		}
		_, err := tx.Asks.DeleteAsks(ctx, purgeBefore(at(time.Hour)), 1000)
		return err
	})

	next := newAsk(askd.KindQuestion, "s1", at(2*time.Minute))
	create(t, s, next)
	if next.ID <= newest.ID {
		t.Errorf("ask created after deleting ask %d got id %d, want a new one", newest.ID, next.ID)
	}
	e := &askd.Event{AskID: next.ID, Session: "s1", Action: askd.ActionCreated, At: at(2 * time.Minute)}
	update(t, s, func(tx askd.Tx) error { return tx.Events.AddEvent(ctx, e) })
	if last.ID == 0 || e.ID <= last.ID {
		t.Errorf("event added after deleting event %d got id %d, want a new one", last.ID, e.ID)
	}
}

func testSessions(t *testing.T, s askd.Store) {
	ctx := t.Context()
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Sessions.Sessions(ctx, askd.SessionQuery{})
		if err != nil {
			return err
		}
		if len(got) != 0 {
			t.Errorf("Sessions of an empty store = %+v, want none", got)
		}
		return nil
	})

	create(t, s,
		newAsk(askd.KindQuestion, "s-b", at(0)),
		settled(newAsk(askd.KindDecision, "s-b", at(time.Minute)), "", at(2*time.Minute)),
		newAsk(askd.KindApproval, "s-b", at(3*time.Minute)),
		settled(newAsk(askd.KindReady, "s-a", at(5*time.Minute)), askd.ReasonDismissed, at(6*time.Minute)),
		newAsk(askd.KindQuestion, "s-c", at(-time.Hour)),
		byAgent(newAsk(askd.KindQuestion, "s-b", at(4*time.Minute)), "agent-2"), // another token's s-b: another session
	)
	want := []askd.SessionInfo{
		{Agent: "agent-1", Name: "s-a", Pending: 0, Total: 1, LastAskAt: at(5 * time.Minute)},
		{Agent: "agent-1", Name: "s-b", Pending: 2, Total: 3, LastAskAt: at(3 * time.Minute)},
		{Agent: "agent-1", Name: "s-c", Pending: 1, Total: 1, LastAskAt: at(-time.Hour)},
		{Agent: "agent-2", Name: "s-b", Pending: 1, Total: 1, LastAskAt: at(4 * time.Minute)},
	}
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Sessions.Sessions(ctx, askd.SessionQuery{})
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			t.Fatalf("Sessions = %d rows, want %d: %s", len(got), len(want), dump(got))
		}
		for i, w := range want {
			g := got[i]
			if g.Agent != w.Agent || g.Name != w.Name || g.Pending != w.Pending || g.Total != w.Total {
				t.Errorf("Sessions[%d] = %s/%s/%d pending/%d total, want %s/%s/%d/%d", i, g.Agent, g.Name, g.Pending, g.Total, w.Agent, w.Name, w.Pending, w.Total)
			}
			checkTime(t, "Sessions["+w.Name+"].LastAskAt", g.LastAskAt, w.LastAskAt)
		}
		return nil
	})
}

// testReadAsk: ReadAsk reads an ask as View does, and says ENOTFOUND for
// one not there.
func testReadAsk(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := newAsk(askd.KindQuestion, "s1", at(0))
	update(t, s, func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, a) })
	a.Settle(askd.StatusAnswered, "", &askd.Answer{Answers: map[string]askd.Choice{"Which?": {Values: []string{"a"}}}}, "alice", at(time.Minute))
	update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, a) })
	var want *askd.Ask
	view(t, s, func(tx askd.Tx) (err error) {
		want, err = tx.Asks.Ask(ctx, a.ID)
		return err
	})
	got, err := s.ReadAsk(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadAsk = %+v, want %+v as View reads it", got, want)
	}
	_, err = s.ReadAsk(ctx, a.ID+1000)
	wantCode(t, err, askd.ENOTFOUND)
}
