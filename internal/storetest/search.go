package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// searchFixture stores settled asks (and a pending one) for the search
// tests and returns them by name. Settled at +1m … +9m in the order below,
// except that d2 and q1 are settled at the same instant (d2 has the higher
// id, so it comes first).
//
//	name  agent    session kind      outcome    by        words
//	q1    agent-1  repo    question  answered   alice     staging, Database, SQLite, Postgres, embedded; own words "CockroachDB"
//	d2    agent-1  repo    decision  answered   bob       Deploy Friday; own words "after the freeze"
//	a3    agent-1  ops     approval  answered   alice     Run migrations; rejected, comment "needs a backup first"
//	a4    agent-2  ops     approval  answered   alice     Deploy the cache; modified, payload word hidden, comment "narrower"
//	x5    agent-1  repo    action    dismissed  bob       Rotate the key; reply "not this sprint"
//	t6    agent-1  ci      question  timeout    askd      Welche Datenbank? 数据库; nobody answered
//	w7    agent-1  ci      blocked   withdrawn  agent-1   Need credentials for staging.example.com
//	r8    agent-1  repo    approval  replaced   agent-1   Deploy Friday again
//	m9    agent-1  repo    question  answered   bob       Which checks?; multi-select lint and own words "gofmt everything"
//	p10   agent-1  repo    decision  pending    -         Deploy Friday (pending: never found)
func searchFixture(t *testing.T, s askd.Store) map[string]*askd.Ask {
	t.Helper()
	settle := func(a *askd.Ask, status askd.Status, reason askd.CancelReason, ans *askd.Answer, by string, minutes int) *askd.Ask {
		a.Settle(status, reason, ans, by, at(time.Duration(minutes)*time.Minute))
		return a
	}
	q1 := newAsk(askd.KindQuestion, "repo", at(0))
	q1.Questions = []askd.Question{{
		Question: "Which database for staging?", Header: "Database",
		Options: []askd.Option{{Label: "SQLite", Description: "embedded engine", Preview: "previewonly"}, {Label: "Postgres"}},
	}}
	settle(q1, askd.StatusAnswered, "", &askd.Answer{Answers: map[string]askd.Choice{"Which database for staging?": {Values: []string{"CockroachDB"}}}}, "alice", 2)

	d2 := newAsk(askd.KindDecision, "repo", at(time.Second))
	d2.Title, d2.Options = "Deploy on Friday?", []askd.Option{{Label: "yes"}, {Label: "no"}}
	settle(d2, askd.StatusAnswered, "", &askd.Answer{Answer: "after the freeze"}, "bob", 2)

	a3 := newAsk(askd.KindApproval, "ops", at(2*time.Second))
	a3.Title, a3.Details = "Run migrations", "ALTER TABLE users ADD COLUMN plan"
	settle(a3, askd.StatusAnswered, "", &askd.Answer{Decision: askd.DecisionRejected, Comment: "needs a backup first"}, "alice", 3)

	a4 := byAgent(newAsk(askd.KindApproval, "ops", at(3*time.Second)), "agent-2")
	a4.Title, a4.Payload = "Deploy the cache", json.RawMessage(`{"comment": "hiddenpayloadword", "n": "\u0000"}`)
	settle(a4, askd.StatusAnswered, "", &askd.Answer{Decision: askd.DecisionModified,
		Payload: json.RawMessage(`{"comment": "hiddenpayloadword", "z": "\u0000", "w": "\\u0000"}`), Comment: "narrower"}, "alice", 4)

	x5 := newAsk(askd.KindAction, "repo", at(4*time.Second))
	x5.Title = "Rotate the key"
	settle(x5, askd.StatusCancelled, askd.ReasonDismissed, &askd.Answer{Response: "not this sprint"}, "bob", 5)

	t6 := newAsk(askd.KindQuestion, "ci", at(5*time.Second))
	t6.Questions = []askd.Question{{Question: "Welche Datenbank? 数据库", Header: "DB", Options: []askd.Option{{Label: "ja"}, {Label: "nein"}}}}
	settle(t6, askd.StatusCancelled, askd.ReasonTimeout, nil, "askd", 6)

	w7 := newAsk(askd.KindBlocked, "ci", at(6*time.Second))
	w7.Title = "Need credentials for staging.example.com"
	settle(w7, askd.StatusCancelled, askd.ReasonWithdrawn, nil, "agent-1", 7)

	r8 := newAsk(askd.KindApproval, "repo", at(7*time.Second))
	r8.Title = "Deploy Friday again"
	settle(r8, askd.StatusCancelled, askd.ReasonReplaced, nil, "agent-1", 8)

	m9 := newAsk(askd.KindQuestion, "repo", at(8*time.Second))
	m9.Questions = []askd.Question{{Question: "Which checks?", Header: "Checks", MultiSelect: true,
		Options: []askd.Option{{Label: "lint"}, {Label: "vet"}, {Label: "tests"}}}}
	settle(m9, askd.StatusAnswered, "", &askd.Answer{Answers: map[string]askd.Choice{"Which checks?": {Values: []string{"lint", "gofmt everything"}, Multi: true}}}, "bob", 9)

	p10 := newAsk(askd.KindDecision, "repo", at(9*time.Second))
	p10.Title = "Deploy Friday"

	f11 := newAsk(askd.KindForm, "forms", at(10*time.Second))
	f11.Title, f11.Source = "Pick a release train", "releasebot"
	f11.Schema = json.RawMessage(`{"type":"object","properties":{"train":{"type":"string","title":"schemaonlyword"},"n":{"type":"integer"}}}`)
	settle(f11, askd.StatusAnswered, "", &askd.Answer{Action: askd.FormAccept, Content: map[string]any{"train": "nightly", "n": 3.0}}, "carol", 10)

	create(t, s, q1, d2, a3, a4, x5, t6, w7, r8, m9, p10, f11)
	return map[string]*askd.Ask{"q1": q1, "d2": d2, "a3": a3, "a4": a4, "x5": x5, "t6": t6, "w7": w7, "r8": r8, "m9": m9, "p10": p10, "f11": f11}
}

// searchCases are SearchQueries over searchFixture with the asks SearchAsks
// must return, in order (CountSearch counts them all).
var searchCases = []struct {
	name  string
	text  string
	query askd.SearchQuery
	want  []string
}{
	{"no words: every settled ask, most recently settled first", "", askd.SearchQuery{}, []string{"f11", "m9", "r8", "w7", "t6", "x5", "a4", "a3", "d2", "q1"}},
	{"a word of the title", "deploy", askd.SearchQuery{}, []string{"r8", "a4", "d2"}},
	{"case does not matter", "FRIDAY", askd.SearchQuery{}, []string{"r8", "d2"}},
	{"the last word as a prefix", "Dep", askd.SearchQuery{}, []string{"r8", "a4", "d2"}},
	{"every word must match", "deploy cache", askd.SearchQuery{}, []string{"a4"}},
	{"a word of own words", "freeze", askd.SearchQuery{}, []string{"d2"}},
	{"own words answering a question", "cockroachdb", askd.SearchQuery{}, []string{"q1"}},
	{"a word of a rejection comment", "backup", askd.SearchQuery{}, []string{"a3"}},
	{"a modification's comment", "narrower", askd.SearchQuery{}, []string{"a4"}},
	{"a payload is not searched", "hiddenpayloadword", askd.SearchQuery{}, nil},
	{"a word of a dismissal's reply", "sprint", askd.SearchQuery{}, []string{"x5"}},
	{"a word of the details", "users", askd.SearchQuery{}, []string{"a3"}},
	{"a word of a question", "staging", askd.SearchQuery{}, []string{"w7", "q1"}},
	{"a question's header", "database", askd.SearchQuery{}, []string{"q1"}},
	{"an option's label", "postgres", askd.SearchQuery{}, []string{"q1"}},
	{"an option's description", "embedded", askd.SearchQuery{}, []string{"q1"}},
	{"a preview is not searched", "previewonly", askd.SearchQuery{}, nil},
	{"own words in a multi-select answer", "gofmt", askd.SearchQuery{}, []string{"m9"}},
	{"a word inside a host name", "example", askd.SearchQuery{}, []string{"w7"}},
	{"punctuation separates words", "staging.example.com", askd.SearchQuery{}, []string{"w7"}},
	{"words of other scripts", "Datenbank 数据库", askd.SearchQuery{}, []string{"t6"}},
	{"a word nothing has", "zeppelin", askd.SearchQuery{}, nil},
	{"a word and an outcome", "friday", askd.SearchQuery{Outcome: askd.OutcomeAnswered}, []string{"d2"}},
	{"agent", "deploy", askd.SearchQuery{Agent: "agent-2"}, []string{"a4"}},
	{"session", "", askd.SearchQuery{Session: "ci"}, []string{"w7", "t6"}},
	{"agent and session", "", askd.SearchQuery{Agent: "agent-1", Session: "ops"}, []string{"a3"}},
	{"kind", "", askd.SearchQuery{Kind: askd.KindApproval}, []string{"r8", "a4", "a3"}},
	{"outcome answered", "", askd.SearchQuery{Outcome: askd.OutcomeAnswered}, []string{"f11", "m9", "a4", "a3", "d2", "q1"}},
	{"outcome dismissed", "", askd.SearchQuery{Outcome: askd.OutcomeDismissed}, []string{"x5"}},
	{"outcome timeout", "", askd.SearchQuery{Outcome: askd.OutcomeTimeout}, []string{"t6"}},
	{"outcome withdrawn", "", askd.SearchQuery{Outcome: askd.OutcomeWithdrawn}, []string{"w7"}},
	{"outcome replaced", "", askd.SearchQuery{Outcome: askd.OutcomeReplaced}, []string{"r8"}},
	{"settled by", "", askd.SearchQuery{SettledBy: "bob"}, []string{"m9", "x5", "d2"}},
	{"words and every filter", "deploy", askd.SearchQuery{Agent: "agent-1", Session: "repo", Kind: askd.KindDecision, Outcome: askd.OutcomeAnswered, SettledBy: "bob"}, []string{"d2"}},
	{"limit", "", askd.SearchQuery{Limit: 2}, []string{"f11", "m9"}},
	{"a form's message and source", "release releasebot", askd.SearchQuery{}, []string{"f11"}},
	{"a form's answer", "nightly", askd.SearchQuery{}, []string{"f11"}},
	{"a form's schema is not searched", "schemaonlyword", askd.SearchQuery{}, nil},
	{"kind form", "", askd.SearchQuery{Kind: askd.KindForm}, []string{"f11"}},
}

func testSearch(t *testing.T, s askd.Store) {
	ctx := t.Context()
	asks := searchFixture(t, s)
	names := map[int64]string{}
	for name, a := range asks {
		names[a.ID] = name
	}
	for _, tt := range searchCases {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.query
			q.Words = askd.SearchWords(tt.text)
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Asks.SearchAsks(ctx, q)
				if err != nil {
					return err
				}
				var gotNames []string
				for _, a := range got {
					gotNames = append(gotNames, names[a.ID])
				}
				if !slices.Equal(gotNames, tt.want) {
					t.Errorf("SearchAsks(%q, %+v) = %v, want %v", tt.text, tt.query, gotNames, tt.want)
				}
				if len(got) > 0 && names[got[0].ID] == tt.want[0] {
					checkAsk(t, tt.want[0], got[0], asks[tt.want[0]])
				}
				n, err := tx.Asks.CountSearch(ctx, q)
				if err != nil {
					return err
				}
				if want := len(tt.want); q.Limit == 0 && n != want {
					t.Errorf("CountSearch(%q, %+v) = %d, want %d", tt.text, tt.query, n, want)
				}
				return nil
			})
		})
	}

	t.Run("paged", func(t *testing.T) {
		for _, text := range []string{"", "deploy"} {
			q := askd.SearchQuery{Words: askd.SearchWords(text)}
			var whole, paged []*askd.Ask
			view(t, s, func(tx askd.Tx) (err error) {
				whole, err = tx.Asks.SearchAsks(ctx, q)
				return err
			})
			for page := 0; page < 20; page++ {
				q.Limit = 2
				var got []*askd.Ask
				view(t, s, func(tx askd.Tx) (err error) {
					got, err = tx.Asks.SearchAsks(ctx, q)
					return err
				})
				paged = append(paged, got...)
				if len(got) < 2 {
					break
				}
				k := askd.SettledKeyOf(got[len(got)-1])
				q.After = &k
			}
			if !slices.Equal(ids(paged), ids(whole)) {
				t.Errorf("search %q by pages of 2 = %v, want %v", text, ids(paged), ids(whole))
			}
		}
	})
}

// testSearchInStep: every write that changes an ask keeps what SearchAsks
// finds in step: settling indexes an ask, a replaced pending ask's old
// words go, a settled ask's changed answer replaces its words, told leaves
// them, and purging removes it.
func testSearchInStep(t *testing.T, s askd.Store) {
	ctx := t.Context()
	find := func(t *testing.T, text string) []int64 {
		t.Helper()
		var got []*askd.Ask
		var n int
		view(t, s, func(tx askd.Tx) (err error) {
			q := askd.SearchQuery{Words: askd.SearchWords(text)}
			if got, err = tx.Asks.SearchAsks(ctx, q); err != nil {
				return err
			}
			n, err = tx.Asks.CountSearch(ctx, q)
			return err
		})
		if n != len(got) {
			t.Errorf("CountSearch(%q) = %d, SearchAsks found %d", text, n, len(got))
		}
		return ids(got)
	}
	want := func(t *testing.T, text string, want ...int64) {
		t.Helper()
		if got := find(t, text); !slices.Equal(got, want) {
			t.Errorf("search %q = %v, want %v", text, got, want)
		}
	}

	a := newAsk(askd.KindDecision, "s1", at(0))
	a.Title = "Zebra crossing"
	create(t, s, a)
	want(t, "zebra")

	a.Title, a.Revision, a.UpdatedAt = "Giraffe crossing", 2, at(time.Minute) // replaced by a newer attention ask
	update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, a) })
	want(t, "giraffe")

	settled(a, "", at(2*time.Minute)).Answer = &askd.Answer{Answer: "wombat"}
	update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, a) })
	want(t, "giraffe", a.ID)
	want(t, "wombat", a.ID)
	want(t, "zebra")

	a.Answer = &askd.Answer{Answer: "quokka"}
	update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, a) })
	want(t, "wombat")
	want(t, "quokka", a.ID)

	a.ToldAt, a.UpdatedAt = ptr(at(3*time.Minute)), at(3*time.Minute)
	update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, a) })
	want(t, "quokka", a.ID)

	born := settled(newAsk(askd.KindReady, "s1", at(0)), askd.ReasonDismissed, at(time.Hour))
	born.Title = "Quokka sighting" // created settled
	create(t, s, born)
	want(t, "quokka", born.ID, a.ID)

	update(t, s, func(tx askd.Tx) error {
		_, err := tx.Asks.DeleteAsks(ctx, purgeBefore(at(30*time.Minute)), 1000)
		return err
	})
	want(t, "quokka", born.ID)
	want(t, "giraffe")
}
