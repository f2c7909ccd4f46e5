// Package groupcommit is the queue in front of a store's writers: Update
// calls queue their functions, and each writer takes whatever queued while it
// was busy and runs it as one batch, which the store commits as one
// transaction (each function in a savepoint of its own). SQLite and
// PostgreSQL share it; what a batch does is the store's. An update under
// askd.Yielding waits in a queue of its own, behind every other.
package groupcommit

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/askd-dev/askd"
)

// Update is one queued call of Store.Update.
type Update struct {
	Ctx  context.Context
	Fn   func(askd.Tx) error
	done chan Result
}

// Result is how one update ended: its function's error, or a panic to raise
// again in the caller.
type Result struct {
	Err        error
	panicked   bool
	panicValue any
}

// OK reports whether the update succeeded.
func (r Result) OK() bool { return r.Err == nil && !r.panicked }

// Queue feeds a store's writers.
type Queue struct {
	updates   chan *Update
	yielding  chan *Update // askd.Yielding's updates, each run alone
	waiting   atomic.Int32 // Do calls not yet taken by a writer, for tests
	quit      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	closed    error
}

// New starts writers goroutines, each handing run batches of at most max
// updates. run must answer every update of its batch (see Finish). Updates
// queued after Close fail with closed.
func New(writers, max int, closed error, run func(batch []*Update)) *Queue {
	q := &Queue{updates: make(chan *Update), yielding: make(chan *Update), quit: make(chan struct{}), closed: closed}
	for range writers {
		q.wg.Go(func() { q.writer(max, run) })
	}
	return q
}

// writer takes the updates waiting, as batches of at most max, and a
// yielding update only when none is: alone, so that no other waits for its
// commit, and after a batch of those that came with it.
func (q *Queue) writer(max int, run func([]*Update)) {
	for {
		var first, yielding *Update
		select {
		case first = <-q.updates:
		case <-q.quit:
			return
		default:
			select {
			case first = <-q.updates:
			case yielding = <-q.yielding:
				first = q.take()
			case <-q.quit:
				return
			}
		}
		if first != nil {
			batch := []*Update{first}
		drain:
			for len(batch) < max {
				select {
				case u := <-q.updates:
					batch = append(batch, u)
				default:
					break drain
				}
			}
			run(batch)
		}
		if yielding != nil {
			run([]*Update{yielding})
		}
	}
}

// take returns an update waiting, or nil.
func (q *Queue) take() *Update {
	select {
	case u := <-q.updates:
		return u
	default:
		return nil
	}
}

// NewUpdate is an update of fn on its own, not queued: for a store's tests
// that hand their run function a batch built to order. Wait has its result
// once the run has answered it.
func NewUpdate(ctx context.Context, fn func(askd.Tx) error) *Update {
	return &Update{Ctx: ctx, Fn: fn, done: make(chan Result, 1)}
}

// Wait returns u's result once the run has answered it.
func (u *Update) Wait() Result { return <-u.done }

// Do queues fn and returns its outcome, raising its panic again. Once a
// writer has taken fn it may be running, so Do waits for it whatever ctx
// does; before that, ctx ending gives up.
func (q *Queue) Do(ctx context.Context, fn func(askd.Tx) error) error {
	u := NewUpdate(ctx, fn)
	queue := q.updates
	if askd.IsYielding(ctx) {
		queue = q.yielding
	}
	q.waiting.Add(1)
	select {
	case queue <- u:
		q.waiting.Add(-1)
	case <-ctx.Done():
		q.waiting.Add(-1)
		return ctx.Err()
	case <-q.quit:
		q.waiting.Add(-1)
		return q.closed
	}
	r := <-u.done
	if r.panicked {
		panic(r.panicValue)
	}
	return r.Err
}

// Close stops the writers once their current batches are done.
func (q *Queue) Close() {
	q.closeOnce.Do(func() { close(q.quit) })
	q.wg.Wait()
}

// Call runs u's function on tx, turning a panic into a result. An update
// whose caller gave up while it ran fails with the caller's error: the store
// keeps nothing of it.
func Call(u *Update, tx askd.Tx) (r Result) {
	defer func() {
		if v := recover(); v != nil {
			r = Result{panicked: true, panicValue: v}
		}
	}()
	r = Result{Err: u.Fn(tx)}
	if r.Err == nil && u.Ctx.Err() != nil {
		r.Err = u.Ctx.Err()
	}
	return r
}

// Finish answers each update of batch with its result; nil entries (updates
// handed on elsewhere) are skipped.
func Finish(batch []*Update, results []Result) {
	for i, u := range batch {
		if u != nil {
			u.done <- results[i]
		}
	}
}

// Fail gives err to every update of batch not failed already, and answers
// them all: for a batch whose transaction failed as a whole.
func Fail(batch []*Update, results []Result, err error) {
	for i := range results {
		if results[i].OK() {
			results[i].Err = err
		}
	}
	Finish(batch, results)
}
