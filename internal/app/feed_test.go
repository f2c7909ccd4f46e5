package app

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/sqlite"
)

// feedService is a service on a fresh SQLite file.
func feedService(t *testing.T) *Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "askd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(st, Config{MaxPending: 1000, MaxPendingPerToken: 100000, MaxNewSessions: 100000})
}

// Loads racing each other (the feed's loop and streams subscribing at "now")
// must leave the ring strictly ascending, each event once: streams find
// their place in it by binary search.
func TestFeedConcurrentLoadsKeepTheRingOrdered(t *testing.T) {
	svc := feedService(t)
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

// With no stream listening the feed reads no events; a stream that then
// subscribes from an earlier cursor still gets every event, in order, and
// the feed loads again.
func TestIdleFeedLoadsNothingAndStreamsMissNothing(t *testing.T) {
	svc := feedService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go svc.Run(ctx)
	agent := askd.Caller{Name: "a", Role: askd.RoleAgent}
	create := func(n int) {
		for i := 0; i < n; i++ {
			agent.Session = fmt.Sprintf("s%d", i)
			if _, err := svc.Create(ctx, agent, &askd.AskInput{Kind: askd.KindReady, Title: "x"}, CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	create(30)
	// The check is that an idle feed does nothing with its kicks. Its loop
	// takes one kick at a time: once it has taken one more, sent now, it
	// has finished with every kick before it.
	drainKicks(t, svc.feed)
	svc.feed.mu.Lock()
	ring, loaded := len(svc.feed.ring), svc.feed.loaded
	svc.feed.mu.Unlock()
	if ring != 0 || loaded {
		t.Fatalf("idle feed holds %d events (loaded %v), want none", ring, loaded)
	}
	s, err := svc.feed.subscribe(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	create(30)
	var got []int64
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 50 && time.Now().Before(deadline) {
		select {
		case <-s.Ready:
		case <-time.After(100 * time.Millisecond):
		}
		evs, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			got = append(got, e.ID)
		}
	}
	for i, id := range got {
		if id != int64(11+i) {
			t.Fatalf("stream got %v, want 11..60 in order", got)
		}
	}
	if len(got) != 50 {
		t.Fatalf("stream got %d events, want 50", len(got))
	}
	// The stream may read all it missed from the store before the loop
	// has handled subscribe's kick (it waits afterReply first): once the
	// loop has handled every kick sent so far, it has loaded.
	drainKicks(t, svc.feed)
	svc.feed.mu.Lock()
	loaded = svc.feed.loaded
	svc.feed.mu.Unlock()
	if !loaded {
		t.Error("the feed did not start loading for its stream")
	}
}

// drainKicks returns once the feed's loop has handled every kick sent so
// far. Its kick channel holds one, and the loop takes the next only after
// handling the last: a send returns once the kick before it was taken, so
// the third of three sends returns once the first was handled.
func drainKicks(t *testing.T, f *feed) {
	t.Helper()
	timeout := time.After(time.Minute)
	for range 3 {
		select {
		case f.kick <- struct{}{}:
		case <-timeout:
			t.Fatal("the feed's loop took no kick")
		}
	}
}
