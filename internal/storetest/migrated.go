package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// Migration 004 (sessions belong to tokens), checked the same way on both
// stores. Each store's test writes the same old database by hand, in its own
// SQL, then opens it: the asks below, and three channels keyed by name
// alone — "shared" (https://b.example/steal), "mine" (https://a.example/tell)
// and "unused" (a hook channel).
//
//	kind      session  agent  status
//	ready     shared   a      pending
//	ready     shared   b      pending
//	question  mine     a      answered
//	question  mine     a      pending

// CheckSessionsMigrated checks s, opened on that database: one session per
// (token, name); the channel of "mine", which only a's asks used, stays a's;
// the shared name's channel, whose setter nothing tells, goes to neither
// (their answers wait for check_ask), and so does the channel of a name
// without asks.
func CheckSessionsMigrated(t *testing.T, s askd.Store) {
	t.Helper()
	ctx := t.Context()
	view(t, s, func(tx askd.Tx) error {
		infos, err := tx.Sessions.Sessions(ctx, askd.SessionQuery{})
		if err != nil {
			return err
		}
		var got []askd.SessionInfo
		for _, i := range infos {
			got = append(got, askd.SessionInfo{Agent: i.Agent, Name: i.Name, Pending: i.Pending, Total: i.Total})
		}
		want := []askd.SessionInfo{{Agent: "a", Name: "mine", Pending: 1, Total: 2}, {Agent: "a", Name: "shared", Pending: 1, Total: 1}, {Agent: "b", Name: "shared", Pending: 1, Total: 1}}
		if !slices.Equal(got, want) {
			t.Errorf("sessions after migration = %+v, want %+v", got, want)
		}
		ch, err := tx.Channels.Channel(ctx, "a", "mine")
		if err != nil || ch.URL != "https://a.example/tell" {
			t.Errorf("a's channel of mine = %+v, %v; want its webhook", ch, err)
		}
		for _, k := range [][2]string{{"a", "shared"}, {"b", "shared"}, {"b", "mine"}, {"a", "unused"}} {
			if ch, err := tx.Channels.Channel(ctx, k[0], k[1]); askd.ErrorCode(err) != askd.ENOTFOUND {
				t.Errorf("channel of %s's %s = %+v, %v; want none (ENOTFOUND)", k[0], k[1], ch, err)
			}
		}
		n, err := tx.Sessions.CountSessions(ctx, "a", time.Unix(0, 0))
		if err != nil || n != 2 {
			t.Errorf("a's sessions recorded = %d, %v; want 2", n, err)
		}
		return nil
	})
}

// Migration 006 (searching the history) indexes the asks already stored.
// Each store's test writes them by hand at migration 005, in its own SQL:
//
//	kind      status    title             questions / answer
//	question  answered  -                 "Which region?" (header Region, options eu-west, us-east),
//	                                      answered in own words "Frankfurt please"
//	approval  answered  Drop the table    rejected, comment "never on Fridays"
//	decision  answered  Ship it?          own words "tomorrow morning"
//	approval  answered  Rotate keys       modified, payload {"k": "\u0000"}, comment "lunchtime please"
//	ready     pending   Pending frankfurt -
//
// settled in that order.

// CheckSearchMigrated checks s, opened on that database: its settled asks
// are found by the words of their questions, titles and answers, most
// recently settled first, and the pending one is not.
func CheckSearchMigrated(t *testing.T, s askd.Store) {
	t.Helper()
	ctx := t.Context()
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", []string{"Rotate keys", "Ship it?", "Drop the table", "Which region?"}},
		{"lunchtime", []string{"Rotate keys"}},
		{"frankfurt", []string{"Which region?"}},
		{"region", []string{"Which region?"}},
		{"us", []string{"Which region?"}},
		{"fridays", []string{"Drop the table"}},
		{"tomorrow", []string{"Ship it?"}},
		{"pending", nil},
	} {
		view(t, s, func(tx askd.Tx) error {
			asks, err := tx.Asks.SearchAsks(ctx, askd.SearchQuery{Words: askd.SearchWords(c.text)})
			if err != nil {
				return err
			}
			var got []string
			for _, a := range asks {
				got = append(got, a.Summary())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("after migration, search %q = %q, want %q", c.text, got, c.want)
			}
			return nil
		})
	}
}

// Migration 013 on SQLite, 014 on PostgreSQL (a team's inbox). Each store's
// test writes, at the migration before it, in its own SQL: a human token
// "alice", an agent token "ci", and one pending ask of ci's.

// CheckTeamsMigrated checks s, opened on that database: alice, whose token
// is from before roles existed, is an admin; ci has no access level and no
// owner; the ask has no owner, claim or escalation, and so is in everyone's
// Mine.
func CheckTeamsMigrated(t *testing.T, s askd.Store) {
	t.Helper()
	ctx := t.Context()
	view(t, s, func(tx askd.Tx) error {
		for _, want := range []askd.Token{
			{Name: "alice", Role: askd.RoleHuman, Access: askd.AccessAdmin},
			{Name: "ci", Role: askd.RoleAgent},
		} {
			tok, err := tx.Tokens.TokenByName(ctx, want.Name)
			if err != nil {
				return err
			}
			if tok.Role != want.Role || tok.Access != want.Access || tok.Owner != want.Owner {
				t.Errorf("token %s after migration = %s/%q/%q, want %s/%q/%q", want.Name, tok.Role, tok.Access, tok.Owner, want.Role, want.Access, want.Owner)
			}
		}
		asks, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Routes: []string{"alice", ""}})
		if err != nil {
			return err
		}
		if len(asks) != 1 {
			t.Fatalf("asks in alice's Mine after migration = %d, want the one there is", len(asks))
		}
		a := asks[0]
		if a.Agent != "ci" || a.Owner != "" || a.ClaimedBy != "" || a.ClaimedAt != nil || a.EscalatedTo != "" || a.EscalatedAt != nil {
			t.Errorf("ask after migration = %s", dump(a))
		}
		teams, err := tx.Teams.Teams(ctx)
		if err != nil || len(teams) != 0 {
			t.Errorf("teams after migration = %d, %v; want none", len(teams), err)
		}
		return nil
	})
}
