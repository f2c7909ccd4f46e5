package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/pgtest"
)

// addEvent adds an event of ask a, with a as its snapshot, as the app does
// after changing an ask, and returns it.
func addEvent(t *testing.T, s askd.Store, a *askd.Ask, action string, change func(a *askd.Ask)) *askd.Event {
	t.Helper()
	ctx := context.Background()
	e := &askd.Event{AskID: a.ID, Session: a.Session, Action: action, Actor: "reviewer"}
	err := s.Update(ctx, func(tx askd.Tx) error {
		got, err := tx.Ask(ctx, a.ID)
		if err != nil {
			return err
		}
		*a = *got
		change(a)
		if err := tx.UpdateAsk(ctx, a); err != nil {
			return err
		}
		e.At, e.Ask = a.UpdatedAt, a
		return tx.AddEvent(ctx, e)
	})
	if err != nil {
		t.Fatalf("%s ask %d: %v", action, a.ID, err)
	}
	return e
}

// Processes of an older build listen to askd_events: they still hear every
// event there, as '<event id>:<ask id>', once.
func TestOlderBuildsHearEvents(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := open(t, url)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN askd_events"); err != nil {
		t.Fatal(err)
	}

	var want []string
	a, e := createWithEvent(t, s, "s1")
	want = append(want, fmt.Sprintf("%d:%d", e.ID, a.ID))
	e = addEvent(t, s, a, askd.ActionAnswered, func(a *askd.Ask) {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{Response: "yes"}, "reviewer", time.Now())
	})
	want = append(want, fmt.Sprintf("%d:%d", e.ID, a.ID))
	// Notifications arrive in commit order: anything more about these
	// events would come before the marker, sent after them.
	if _, err := conn.Exec(ctx, "SELECT pg_notify('askd_events', 'marker')"); err != nil {
		t.Fatal(err)
	}
	want = append(want, "marker")
	for i, w := range want {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			t.Fatalf("notification %d: %v", i, err)
		}
		if n.Payload != w {
			t.Fatalf("notification %d on askd_events: %q, want %q", i, n.Payload, w)
		}
	}
}
