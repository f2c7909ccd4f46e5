package groupcommit

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
)

// A writer that runs each batch, once release is closed, by calling every
// update with a nil Tx; took is signalled as it takes a batch.
func newTestQueue(sizes *[]int, mu *sync.Mutex, took chan<- struct{}, release <-chan struct{}) *Queue {
	return New(1, 4, errors.New("closed"), func(batch []*Update) {
		select {
		case took <- struct{}{}:
		default:
		}
		<-release
		mu.Lock()
		*sizes = append(*sizes, len(batch))
		mu.Unlock()
		results := make([]Result, len(batch))
		for i, u := range batch {
			results[i] = Call(u, askd.Tx{})
		}
		Finish(batch, results)
	})
}

// Updates that queue while the writer is busy share a batch, of at most
// max; each gets its own outcome, a panic included.
func TestBatchesAndOutcomes(t *testing.T) {
	var sizes []int
	var mu sync.Mutex
	release := make(chan struct{})
	q := newTestQueue(&sizes, &mu, make(chan struct{}, 1), release)
	defer q.Close()
	errBoom := errors.New("boom")
	var wg sync.WaitGroup
	outcomes := make([]any, 9)
	for i := range outcomes {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					outcomes[i] = v
				}
			}()
			outcomes[i] = q.Do(context.Background(), func(askd.Tx) error {
				switch i % 3 {
				case 1:
					return errBoom
				case 2:
					panic("panicked")
				}
				return nil
			})
		})
	}
	close(release)
	wg.Wait()
	for i, o := range outcomes {
		want := []any{nil, errBoom, "panicked"}[i%3]
		if o != want {
			t.Errorf("update %d: %v, want %v", i, o, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range sizes {
		if n > 4 {
			t.Errorf("a batch of %d, max 4", n)
		}
		total += n
	}
	if total != 9 {
		t.Errorf("batches %v ran %d updates, want 9", sizes, total)
	}
}

// A caller that gives up before a writer takes its update gets ctx's error
// and the update never runs; after Close, updates fail with the closed error.
func TestGiveUpAndClose(t *testing.T) {
	var sizes []int
	var mu sync.Mutex
	release, took := make(chan struct{}), make(chan struct{}, 1)
	q := newTestQueue(&sizes, &mu, took, release)
	started := make(chan struct{})
	go q.Do(context.Background(), func(askd.Tx) error { close(started); return nil })
	<-took // the writer holds that update until release: nobody takes the next
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := q.Do(ctx, func(askd.Tx) error { ran = true; return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Do with a cancelled context: %v", err)
	}
	close(release)
	<-started
	q.Close()
	if err := q.Do(context.Background(), func(askd.Tx) error { ran = true; return nil }); err == nil || err.Error() != "closed" {
		t.Errorf("Do after Close: %v, want the closed error", err)
	}
	if ran {
		t.Error("an update ran that should not have")
	}
}
