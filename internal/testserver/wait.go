package testserver

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
)

// waitFor is how long the waits below poll before failing the test:
// generous, so that they hold on a busy machine.
const waitFor = 60 * time.Second

// Eventually polls done until it reports true, failing the test with what
// it waited for when that takes longer than a generous minute (waitFor):
// the one way tests here wait for a condition no event announces.
func Eventually(t testing.TB, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitFor); !done(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", waitFor, what)
		}
	}
}

// Pending waits until session has at least n pending asks and returns them.
func (s *Server) Pending(t testing.TB, session string, n int) []*askd.Ask {
	t.Helper()
	var asks []*askd.Ask
	Eventually(t, fmt.Sprintf("%d pending asks in session %q", n, session), func() bool {
		var err error
		if asks, err = s.Human().List(context.Background(), client.ListOptions{Session: session, Status: askd.StatusPending}); err != nil {
			t.Fatal(err)
		}
		return len(asks) >= n
	})
	return asks
}

// CutOff waits until ask id's call was cut off (a cut_off event in its
// history) and returns the ask, which must still be pending and marked to be
// told (SPEC §2.1: a cut-off is not a withdrawal).
func (s *Server) CutOff(t testing.TB, id int64) *askd.Ask {
	t.Helper()
	Eventually(t, fmt.Sprintf("ask %d's call cut off", id), func() bool {
		a, err := s.Human().Show(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(a.History, func(e *askd.Event) bool { return e.Action == askd.ActionCutOff })
	})
	// The ask and its history are two reads: read the ask again, now that
	// the cut-off is known to have committed.
	a, err := s.Human().Show(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Pending() || !a.ToBeTold {
		t.Fatalf("ask %d after its cut-off: %s/%s, to be told %v; want pending and to be told", id, a.Status, a.CancelReason, a.ToBeTold)
	}
	return &a.Ask
}
