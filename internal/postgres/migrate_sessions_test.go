package postgres_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/pgtest"
)

// TestMigrateSessionsToTokens: a database from before sessions belonged to
// tokens, where agents a and b both used session "shared" and a alone used
// "mine", each with a channel, migrates to one session per (token, name); the
// channel of "mine" stays a's, and the shared name's channel, whose setter
// nothing tells, goes to neither (their answers wait for check_ask). The same
// case as the SQLite store's test of its 004_sessions.sql.
func TestMigrateSessionsToTokens(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	stmts := []string{`CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`}
	for _, v := range []string{"001_asks_events_tokens", "002_channels_deliveries", "003_mcp_calls"} {
		b, err := os.ReadFile("migrations/" + v + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(b), "INSERT INTO schema_migrations (version) VALUES ('"+v+"')")
	}
	stmts = append(stmts,
		`INSERT INTO asks (kind, session, agent, status, created_at, updated_at) VALUES
			('ready', 'shared', 'a', 'pending', now(), now()), ('ready', 'shared', 'b', 'pending', now(), now()),
			('question', 'mine', 'a', 'answered', now(), now()), ('question', 'mine', 'a', 'pending', now(), now())`,
		`INSERT INTO channels VALUES ('shared', '{"type":"webhook","url":"https://b.example/steal","secret":"k"}', now()),
			('mine', '{"type":"webhook","url":"https://a.example/tell","secret":"k"}', now()),
			('unused', '{"type":"hook"}', now())`)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}

	s := open(t, url)
	var got []askd.SessionInfo
	err = s.View(ctx, func(tx askd.Tx) error {
		infos, err := tx.Sessions(ctx)
		for _, i := range infos {
			got = append(got, askd.SessionInfo{Agent: i.Agent, Name: i.Name, Pending: i.Pending, Total: i.Total})
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []askd.SessionInfo{{Agent: "a", Name: "mine", Pending: 1, Total: 2}, {Agent: "a", Name: "shared", Pending: 1, Total: 1}, {Agent: "b", Name: "shared", Pending: 1, Total: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("sessions after migration = %+v, want %+v", got, want)
	}
	err = s.View(ctx, func(tx askd.Tx) error {
		ch, err := tx.Channel(ctx, "a", "mine")
		if err != nil || ch.URL != "https://a.example/tell" {
			t.Errorf("a's channel of mine = %+v, %v; want its webhook", ch, err)
		}
		for _, k := range [][2]string{{"a", "shared"}, {"b", "shared"}, {"b", "mine"}, {"a", "unused"}} {
			if ch, err := tx.Channel(ctx, k[0], k[1]); askd.ErrorCode(err) != askd.ENOTFOUND {
				t.Errorf("channel of %s's %s = %+v, %v; want none (ENOTFOUND)", k[0], k[1], ch, err)
			}
		}
		n, err := tx.CountSessions(ctx, "a", time.Unix(0, 0))
		if err != nil || n != 2 {
			t.Errorf("a's sessions recorded = %d, %v; want 2", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
