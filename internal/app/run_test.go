package app_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/sqlite"
	"github.com/askd-dev/askd/internal/testserver"
)

// stalledStore is a store that does not answer until stall is closed, as a
// database that stopped answering without closing its connections.
type stalledStore struct {
	askd.Store
	stall chan struct{}
}

func (s stalledStore) View(ctx context.Context, fn func(askd.Tx) error) error {
	<-s.stall
	return s.Store.View(ctx, fn)
}

func (s stalledStore) Update(ctx context.Context, fn func(askd.Tx) error) error {
	<-s.stall
	return s.Store.Update(ctx, fn)
}

// TestRunTicksWhileTheStoreStalls holds the sweep in a store that does not
// answer: Run's loop must tick on (Ticked, what askd serve's watchdog reads),
// and Run must return once the store answers again and ctx ends.
func TestRunTicksWhileTheStoreStalls(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "askd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stall := make(chan struct{})
	svc := app.New(stalledStore{Store: st, stall: stall}, app.Config{})
	if !svc.Ticked().IsZero() {
		t.Fatalf("Ticked before Run: %v, want the zero time", svc.Ticked())
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { svc.Run(ctx); close(ran) }()
	var first time.Time
	testserver.Eventually(t, "Run's first tick", func() bool { first = svc.Ticked(); return !first.IsZero() })
	// The first tick's sweep is now stuck in the store; the loop goes on.
	testserver.Eventually(t, "two more ticks while the sweep waits on the store", func() bool {
		return svc.Ticked().Sub(first) >= 2*time.Second
	})
	close(stall)
	cancel()
	<-ran
}
