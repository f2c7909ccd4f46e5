package groupcommit

import (
	"context"
	"errors"
	"runtime"
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

// An update queued while a yielding one waits for the writer runs first,
// and the yielding one runs alone: a purge's next batch goes after the
// answer that came while its last one ran.
func TestYieldingGoesLast(t *testing.T) {
	var (
		mu    sync.Mutex
		order []string
		sizes []int
	)
	q := New(1, 8, errors.New("closed"), func(batch []*Update) {
		mu.Lock()
		sizes = append(sizes, len(batch))
		mu.Unlock()
		results := make([]Result, len(batch))
		for i, u := range batch {
			results[i] = Call(u, askd.Tx{})
		}
		Finish(batch, results)
	})
	defer q.Close()
	record := func(name string) func(askd.Tx) error {
		return func(askd.Tx) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return nil
		}
	}
	held, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = q.Do(askd.Yielding(context.Background()), func(tx askd.Tx) error {
			close(held)
			<-release
			return record("purge 1")(tx)
		})
	})
	<-held
	wg.Go(func() { _ = q.Do(askd.Yielding(context.Background()), record("purge 2")) })
	for q.waiting.Load() < 1 {
		runtime.Gosched()
	}
	wg.Go(func() { _ = q.Do(context.Background(), record("answer a")) })
	wg.Go(func() { _ = q.Do(context.Background(), record("answer b")) })
	for q.waiting.Load() < 3 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 4 || order[0] != "purge 1" || order[3] != "purge 2" {
		t.Errorf("ran %v, want purge 1, the two answers, purge 2", order)
	}
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != 2 || sizes[2] != 1 {
		t.Errorf("batches of %v, want [1 2 1]: the answers together, each purge alone", sizes)
	}
}
