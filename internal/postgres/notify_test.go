package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
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
		got, err := tx.Asks.Ask(ctx, a.ID)
		if err != nil {
			return err
		}
		*a = *got
		change(a)
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		e.At, e.Ask = a.UpdatedAt, a
		return tx.Events.AddEvent(ctx, e)
	})
	if err != nil {
		t.Fatalf("%s ask %d: %v", action, a.ID, err)
	}
	return e
}

// readAsk is ask id as s reads it now.
func readAsk(t *testing.T, s askd.Store, id int64) *askd.Ask {
	t.Helper()
	a, err := s.ReadAsk(context.Background(), id)
	if err != nil {
		t.Fatalf("ReadAsk(%d): %v", id, err)
	}
	return a
}

// An event committed by one Store reaches another's watchers with the ask as
// the event left it, equal to what ReadAsk gives back, times included (UTC,
// to the microsecond), however the writer's times were written.
func TestNotificationCarriesTheAsk(t *testing.T) {
	url := pgtest.URL(t)
	writer, reader := open(t, url), open(t, url)
	heard := changes(reader)

	// Nanoseconds and a zone of their own: the snapshot keeps them as the
	// row does.
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	created := time.Date(2026, 3, 4, 5, 6, 7, 123456789, zone)
	deadline := created.Add(time.Hour)
	a := &askd.Ask{
		Kind: askd.KindApproval, Session: "s1", Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
		Title: "Run the migration?", Details: "ALTER TABLE asks …",
		Payload:  json.RawMessage(`{"command":"make migrate","args":["--all"]}`), // compact, as the app stores it
		ToolName: "Bash", ToolUseID: "toolu_1",
		CreatedAt: created, UpdatedAt: created, Deadline: &deadline, ToBeTold: true,
	}
	e := &askd.Event{Session: a.Session, Action: askd.ActionCreated, Actor: a.Agent, At: created, Ask: a}
	err := writer.Update(context.Background(), func(tx askd.Tx) error {
		if err := tx.Asks.CreateAsk(context.Background(), a); err != nil {
			return err
		}
		e.AskID = a.ID
		return tx.Events.AddEvent(context.Background(), e)
	})
	if err != nil {
		t.Fatal(err)
	}
	c := next(t, heard)
	if c.EventID != e.ID || c.AskID != a.ID || c.Ask == nil {
		t.Fatalf("heard %+v, want event %d of ask %d with the ask", c, e.ID, a.ID)
	}
	if want := readAsk(t, reader, a.ID); !reflect.DeepEqual(c.Ask, want) {
		t.Errorf("the created event's ask:\n%+v\nReadAsk:\n%+v", c.Ask, want)
	}

	settled := created.Add(90 * time.Second)
	e = addEvent(t, writer, a, askd.ActionAnswered, func(a *askd.Ask) {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{
			Decision: "approve", Payload: json.RawMessage(`{"command":"make migrate"}`), Comment: "go ahead",
		}, "reviewer", settled)
	})
	c = next(t, heard)
	if c.EventID != e.ID || c.AskID != a.ID || c.Ask == nil {
		t.Fatalf("heard %+v, want event %d of ask %d with the ask", c, e.ID, a.ID)
	}
	if want := readAsk(t, reader, a.ID); !reflect.DeepEqual(c.Ask, want) {
		t.Errorf("the approved event's ask:\n%+v\nReadAsk:\n%+v", c.Ask, want)
	}
}

// eventPayload is the length in bytes of the askd_asks payload of the event
// that the next event of ask a, with a as its snapshot, would be:
// "<event id>:<ask id>:<snapshot>". a's times must be as the store keeps
// them (UTC, microseconds), so that its JSON is the snapshot's.
func eventPayload(t *testing.T, s askd.Store, a *askd.Ask) int {
	t.Helper()
	var last int64
	err := s.View(context.Background(), func(tx askd.Tx) (err error) {
		last, err = tx.Events.LastEventID(context.Background())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return len(fmt.Sprintf("%d:%d:", last+1, a.ID)) + len(b)
}

// snapshotBytes is the length in bytes of event id's stored snapshot.
func snapshotBytes(t *testing.T, url string, id int64) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT octet_length(snapshot::text) FROM events WHERE id = $1", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A snapshot that would make the payload 8000 bytes or more (PostgreSQL's
// limit in a default build) is left out, counted in bytes, not characters:
// the event is heard without its ask, and the commit is not refused.
func TestNotificationTooLongForSnapshot(t *testing.T) {
	url := pgtest.URL(t)
	writer, reader := open(t, url), open(t, url)
	heard := changes(reader)
	a, _ := createWithEvent(t, writer, "s1")
	next(t, heard)
	// As the store keeps them, so that json.Marshal(a) is the snapshot.
	a = readAsk(t, writer, a.ID)

	// 3,000 characters of 3 bytes each: 9,000 bytes of details, within
	// askd.MaxDetailsBytes, far under 8,000 characters.
	e := addEvent(t, writer, a, askd.ActionReplaced, func(a *askd.Ask) { a.Details = strings.Repeat("€", 3000) })
	c := next(t, heard)
	if c.EventID != e.ID || c.AskID != a.ID || c.Ask != nil {
		t.Fatalf("heard %+v, want event %d of ask %d without the ask", c, e.ID, a.ID)
	}

	// The limit to the byte: a payload of 7,999 bytes carries the ask, one of
	// 8,000 does not.
	for _, tt := range []struct {
		bytes int
		ask   bool
	}{{7999, true}, {8000, false}} {
		a.Details = "x" // one byte in the JSON, where "" would leave the field out
		details := strings.Repeat("x", tt.bytes-eventPayload(t, writer, a)+1)
		e := addEvent(t, writer, a, askd.ActionReplaced, func(a *askd.Ask) { a.Details = details })
		if got := len(fmt.Sprintf("%d:%d:", e.ID, a.ID)) + snapshotBytes(t, url, e.ID); got != tt.bytes {
			t.Fatalf("the payload would be %d bytes, want %d: the test's arithmetic is off", got, tt.bytes)
		}
		c := next(t, heard)
		if c.EventID != e.ID || c.AskID != a.ID || (c.Ask != nil) != tt.ask {
			t.Errorf("a payload of %d bytes: heard %+v, want event %d of ask %d, with the ask: %v", tt.bytes, c, e.ID, a.ID, tt.ask)
		}
		if c.Ask != nil && c.Ask.Details != details {
			t.Errorf("a payload of %d bytes: the ask's details are %d bytes, want %d", tt.bytes, len(c.Ask.Details), len(details))
		}
	}
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

// Each event reaches a watcher once, although the database sends it on two
// channels, and in commit order.
func TestEachEventHeardOnce(t *testing.T) {
	url := pgtest.URL(t)
	writer, reader := open(t, url), open(t, url)
	heard := changes(reader)
	var want []int64
	for i := range 5 {
		a, e := createWithEvent(t, writer, fmt.Sprint("s", i))
		want = append(want, e.ID)
		e = addEvent(t, writer, a, askd.ActionAnswered, func(a *askd.Ask) {
			a.Settle(askd.StatusAnswered, "", &askd.Answer{Response: "yes"}, "reviewer", time.Now())
		})
		want = append(want, e.ID)
	}
	// A duplicate would come before the last event's change, committed after it.
	_, last := createWithEvent(t, writer, "last")
	want = append(want, last.ID)
	var got []int64
	for len(got) == 0 || got[len(got)-1] != last.ID {
		got = append(got, next(t, heard).EventID)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the watcher heard events %v, want %v", got, want)
	}
}

// An answer's event, with the answered ask, comes before question_answered's
// bare notice of the same commit: a waiter woken first by the notice would
// read the ask before its snapshot arrived.
func TestAnswerEventBeforeSettledNotice(t *testing.T) {
	url := pgtest.URL(t)
	writer, reader := open(t, url), open(t, url)
	heard := changes(reader)
	a, _ := createWithEvent(t, writer, "s1")
	next(t, heard)
	e := addEvent(t, writer, a, askd.ActionAnswered, func(a *askd.Ask) {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{Response: "yes"}, "reviewer", time.Now())
	})
	for i, want := range []askd.Change{{EventID: e.ID, AskID: a.ID}, {AskID: a.ID}} {
		select {
		case c := <-heard:
			if c.EventID != want.EventID || c.AskID != want.AskID || c.Reset || (c.Ask != nil) != (want.EventID != 0) {
				t.Fatalf("change %d: heard %+v, want %+v (with the ask for the event)", i, c, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("change %d not heard in 10 s", i)
		}
	}
}

// A snapshot in an event's notification that cannot stand for the ask (it
// does not decode, or is of another ask) is dropped, not the event: it is
// heard without its ask.
func TestUnusableSnapshotHeardWithoutAsk(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := open(t, url)
	heard := changes(s)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for i, tt := range []struct{ name, snapshot string }{
		{"not JSON", `{"id":7,`},
		{"not an ask", `[1,2]`},
		{"another ask", `{"id":8,"status":"pending"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eventID := int64(100 + i)
			if _, err := conn.Exec(ctx, "SELECT pg_notify('askd_asks', $1)", fmt.Sprintf("%d:7:%s", eventID, tt.snapshot)); err != nil {
				t.Fatal(err)
			}
			if c := next(t, heard); c != (askd.Change{EventID: eventID, AskID: 7}) {
				t.Errorf("heard %+v, want event %d of ask 7 without the ask", c, eventID)
			}
		})
	}
}
