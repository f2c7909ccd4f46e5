package app

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/sqlite"
)

// Loads racing each other (the feed's loop and streams subscribing at "now")
// must leave the ring strictly ascending, each event once: streams find
// their place in it by binary search.
func TestFeedConcurrentLoadsKeepTheRingOrdered(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "askd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := New(st, Config{MaxPending: 1000})
	ctx := context.Background()
	agent := askd.Caller{Name: "a", Role: askd.RoleAgent}
	if _, err := svc.feed.subscribe(ctx, -1); err != nil { // loaded, at event 0
		t.Fatal(err)
	}
	for round := 0; round < 20; round++ {
		for i := 0; i < 5; i++ {
			agent.Session = fmt.Sprintf("s%d-%d", round, i)
			if _, err := svc.Create(ctx, agent, &askd.AskInput{Kind: askd.KindReady, Title: "x"}, CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() { defer wg.Done(); _ = svc.feed.load(ctx) }()
		}
		wg.Wait()
	}
	svc.feed.mu.Lock()
	defer svc.feed.mu.Unlock()
	if len(svc.feed.ring) != 100 {
		t.Fatalf("ring has %d events, want 100", len(svc.feed.ring))
	}
	for i := 1; i < len(svc.feed.ring); i++ {
		if svc.feed.ring[i].ID <= svc.feed.ring[i-1].ID {
			t.Fatalf("ring out of order at %d: %d after %d", i, svc.feed.ring[i].ID, svc.feed.ring[i-1].ID)
		}
	}
}
