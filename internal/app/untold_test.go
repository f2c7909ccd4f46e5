package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/sqlite"
	"github.com/askd-dev/askd/internal/testserver"
)

// onOneDatabase runs f on SQLite and on PostgreSQL with two services, each
// on a store handle of its own on one database, as two processes have.
func onOneDatabase(t *testing.T, f func(t *testing.T, one, two *app.Service)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "askd.db")
		open := func() askd.Store {
			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		f(t, runService(t, open()), runService(t, open()))
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		f(t, runService(t, testserver.OpenPostgres(t, url)), runService(t, testserver.OpenPostgres(t, url)))
	})
}

// TestMarkToldOnce: of marks of one decided ask made at once through two
// processes, one marks it (one told row, "handed on"); every other is
// ECONFLICT with the ask, told. A read that keeps it untold leaves it so.
func TestMarkToldOnce(t *testing.T) {
	onOneDatabase(t, func(t *testing.T, one, two *app.Service) {
		ctx := t.Context()
		a, err := one.Create(ctx, agentCaller, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy", Key: "deploy"}, app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := two.MarkTold(ctx, agentCaller, a.ID); askd.ErrorCode(err) != askd.ECONFLICT {
			t.Fatalf("mark of a pending ask: %v, want ECONFLICT", err)
		}
		if _, err := two.Answer(ctx, humanCaller, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		read, err := one.AwaitOutcome(ctx, agentCaller, app.Wait{Ask: a.ID, Mode: app.AwaitAnswer, KeepUntold: true}, nil)
		if err != nil || read.Pending() || read.ToldAt != nil {
			t.Fatalf("a read that keeps it untold = %+v, %v", read, err)
		}

		const n = 16
		var wg sync.WaitGroup
		marked := make(chan *askd.Ask, n)
		refused := make(chan error, n)
		for i := range n {
			svc := []*app.Service{one, two}[i%2]
			wg.Go(func() {
				got, err := svc.MarkTold(ctx, agentCaller, a.ID)
				var ae *askd.Error
				switch {
				case err == nil:
					marked <- got
				case askd.ErrorCode(err) == askd.ECONFLICT && errors.As(err, &ae) && ae.Ask != nil && ae.Ask.ToldAt != nil:
					refused <- err
				default:
					t.Errorf("mark: %v", err)
				}
			})
		}
		wg.Wait()
		if len(marked) != 1 || len(refused) != n-1 {
			t.Fatalf("%d marks marked the ask and %d were refused, want 1 and %d", len(marked), len(refused), n-1)
		}
		hist, err := one.History(ctx, humanCaller, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		told := 0
		for _, ev := range hist {
			if ev.Action == askd.ActionTold {
				told++
				if ev.Note != "handed on" || ev.Actor != agentCaller.Name {
					t.Errorf("told row %+v, want handed on by %s", ev, agentCaller.Name)
				}
			}
		}
		if told != 1 {
			t.Fatalf("%d told rows, want 1", told)
		}
	})
}
