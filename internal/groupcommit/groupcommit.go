// Package groupcommit is the queue in front of a store's writers: Update
// calls queue their functions, and whatever queued while a batch ran is run
// as the next batch, which the store commits as one transaction (each
// function in a savepoint of its own). SQLite and PostgreSQL share it; what a
// batch does is the store's.
//
// There is no writer goroutine: the caller that finds a writer's slot free
// runs the batch itself (leader-based group commit). On an idle server an
// update so runs on its caller's goroutine, with no hand-off to another
// goroutine and back, the case of one person's answer. When a leader's batch
// is done and more updates have queued, it hands the slot to the first of
// them, which runs them all as the next batch, and returns to its own caller.
package groupcommit

import (
	"context"
	"sync"

	"github.com/askd-dev/askd"
)

// Update is one queued call of Store.Update.
type Update struct {
	Ctx  context.Context
	Fn   func(askd.Tx) error
	done chan Result
	lead chan struct{} // the slot handed on: run the next batch, from this update on
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
	writers, max int
	run          func(batch []*Update)
	closedErr    error

	mu      sync.Mutex
	idle    sync.Cond // signalled when active falls, for Close
	active  int       // batches running, at most writers
	pending []*Update // queued while every slot was taken, oldest first
	closed  bool
}

// New returns a queue that runs at most writers batches at once, each of at
// most max updates, with run. run must answer every update of its batch (see
// Finish). Updates queued after Close fail with closed.
func New(writers, max int, closed error, run func(batch []*Update)) *Queue {
	q := &Queue{writers: writers, max: max, run: run, closedErr: closed}
	q.idle.L = &q.mu
	return q
}

// NewUpdate is an update of fn on its own, not queued: for a store's tests
// that hand their run function a batch built to order. Wait has its result
// once the run has answered it.
func NewUpdate(ctx context.Context, fn func(askd.Tx) error) *Update {
	return &Update{Ctx: ctx, Fn: fn, done: make(chan Result, 1), lead: make(chan struct{}, 1)}
}

// Wait returns u's result once the run has answered it.
func (u *Update) Wait() Result { return <-u.done }

// Do runs fn in a batch and returns its outcome, raising its panic again.
// With a writer's slot free the batch runs on the caller's goroutine;
// otherwise fn queues for the next batch. Once a batch has taken fn it may be
// running, so Do waits for it whatever ctx does; before that, ctx ending
// gives up.
func (q *Queue) Do(ctx context.Context, fn func(askd.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	u := NewUpdate(ctx, fn)
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return q.closedErr
	}
	if q.active < q.writers && len(q.pending) == 0 {
		q.active++
		q.mu.Unlock()
		q.lead(u)
	} else {
		q.pending = append(q.pending, u)
		q.mu.Unlock()
		if err := q.wait(ctx, u); err != nil {
			return err
		}
	}
	r := <-u.done
	if r.panicked {
		panic(r.panicValue)
	}
	return r.Err
}

// wait waits until u has its result, or is handed the slot and has run the
// batch that gives it one. It returns ctx's error when ctx ends while u is
// still queued, and u then never runs.
func (q *Queue) wait(ctx context.Context, u *Update) error {
	select {
	case <-u.lead:
		q.lead(u)
		return nil
	case r := <-u.done:
		u.done <- r // Do reads it
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	for i, p := range q.pending {
		if p == u {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			q.mu.Unlock()
			return ctx.Err()
		}
	}
	q.mu.Unlock()
	// Taken already: into a batch, or handed the slot.
	select {
	case <-u.lead:
		q.lead(u)
	case r := <-u.done:
		u.done <- r
	}
	return nil
}

// lead runs a batch of first and whatever queued behind it, in the slot its
// caller holds, then hands the slot to the next queued update or frees it.
func (q *Queue) lead(first *Update) {
	q.mu.Lock()
	n := min(len(q.pending), q.max-1)
	batch := append([]*Update{first}, q.pending[:n]...)
	q.pending = q.pending[n:]
	q.mu.Unlock()

	q.run(batch)

	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) > 0 && !q.closed {
		next := q.pending[0]
		q.pending = q.pending[1:]
		next.lead <- struct{}{}
		return
	}
	q.active--
	q.idle.Broadcast()
}

// Close fails the updates still queued and every later one, and returns once
// the batches running are done.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		for _, u := range q.pending {
			u.done <- Result{Err: q.closedErr}
		}
		q.pending = nil
	}
	for q.active > 0 {
		q.idle.Wait()
	}
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
