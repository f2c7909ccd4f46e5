package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/askd-dev/askd"
)

// The completion face of an ask's outcome (outcome.go): for calls that wait
// without a goroutine of their own.

// Handlers are what an expected outcome (Expect) calls, each on a goroutine
// of its own that they may block briefly: Progress every Wait.Progress
// while the ask is pending (an error says the caller is gone), and Done once
// with the outcome. Done's err is ErrCallCancelled or ErrCallerGone when
// there is no reply to send.
type Handlers struct {
	Progress func(n float64) error
	Done     func(a *askd.Ask, err error)
}

// Expectation is an outcome awaited without a goroutine (Expect): a small
// struct, a timer and a watch on the ask. Whatever wakes it (the ask
// changing, the timer, the caller going away, the server stopping) runs one
// short-lived goroutine that looks at the ask and, when the wait is over,
// calls Done.
type Expectation struct {
	aw       *await
	ctx      context.Context
	h        Handlers
	every    time.Duration // progress every; 0: none
	wakeAt   time.Time     // when the first look said to look again
	mu       sync.Mutex
	timer    *time.Timer
	progress time.Time // when the next progress is due
	sent     float64   // progress reports made
	running  bool      // a step is scheduled or running
	again    bool      // something happened while it ran: look once more
	left     bool      // the caller went away
	stopping bool      // the server is stopping
	over     bool      // Done was called
}

// Expect is AwaitOutcome for a call that waits without a goroutine of its
// own: the outcome is given to h.Done, once. Its first look is Now, on the
// caller's goroutine; if the wait goes on, the caller starts it (Start), and
// reports the caller going away (Gone) and the server stopping (Shutdown).
// A settled outcome is marked told just after Done returns (its reply
// written first: that write is off the answer's way back).
func (s *Service) Expect(ctx context.Context, c askd.Caller, w Wait, h Handlers) *Expectation {
	e := &Expectation{ctx: ctx, h: h, every: w.Progress, running: true} // until Start, wake-ups only mark that something happened
	e.aw = s.startAwait(c, w, e.kick)
	if w.Call != nil && w.Mode != AwaitCheck {
		// Kept in the store, so a cancellation reaching another process finds it.
		if err := e.aw.track(ctx, *w.Call); err != nil {
			s.cfg.Logger.Warn("record MCP call", "id", w.Ask, "err", err)
		}
	}
	return e
}

// Now is the expectation's first look. over reports that the wait ended at
// once, with the outcome (err ErrCallCancelled: no reply); Done will then
// never be called. Otherwise the caller calls Start.
func (e *Expectation) Now() (a *askd.Ask, err error, over bool) {
	a, wake, done, err := e.aw.look(e.ctx)
	if !done {
		e.wakeAt = wake
		return a, nil, false
	}
	e.mu.Lock()
	e.over = true
	e.mu.Unlock()
	defer e.aw.stop()
	if errors.Is(err, ErrCallCancelled) {
		return nil, err, true
	}
	a, err = e.aw.finishBeside(e.ctx, a, err)
	return a, err, true
}

// Close ends an expectation that was never started, the server stopping
// before its call could wait: it returns the outcome to reply with now (a
// *ShutdownError), and Done is never called.
func (e *Expectation) Close() (*askd.Ask, error) {
	e.mu.Lock()
	e.over = true
	e.mu.Unlock()
	defer e.aw.stop()
	return e.aw.finishBeside(e.ctx, nil, ShuttingDown(e.aw.id))
}

// Start lets wake-ups run the expectation's steps, taking one at once if any
// came since Now.
func (e *Expectation) Start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.every > 0 {
		e.progress = time.Now().Add(e.every)
	}
	e.timer = time.AfterFunc(e.next(e.wakeAt), e.kick)
	if e.again {
		go e.run()
		return
	}
	e.running = false
}

// Gone records that the caller went away: the ask is cut off, and Done
// called with ErrCallerGone.
func (e *Expectation) Gone() {
	e.mu.Lock()
	e.left = true
	e.mu.Unlock()
	e.kick()
}

// Shutdown records that the server is stopping: Done is called with a
// *ShutdownError.
func (e *Expectation) Shutdown() {
	e.mu.Lock()
	e.stopping = true
	e.mu.Unlock()
	e.kick()
}

// next is how long until the expectation must look again, at wake (on the
// service's clock) or when progress is due.
func (e *Expectation) next(wake time.Time) time.Duration {
	return e.aw.sleep(wake, e.progress)
}

// kick schedules a look; it never blocks, so the hub may call it.
func (e *Expectation) kick() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.over {
		return
	}
	if e.running {
		e.again = true
		return
	}
	e.running = true
	go e.run()
}

// run looks until nothing new has happened.
func (e *Expectation) run() {
	for {
		e.mu.Lock()
		left, stopping := e.left, e.stopping
		e.again = false
		e.mu.Unlock()
		if e.step(left, stopping) {
			return
		}
		e.mu.Lock()
		if !e.again {
			e.running = false
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
	}
}

// step is one look; it reports whether the expectation ended.
func (e *Expectation) step(left, stopping bool) bool {
	switch {
	case left:
		// On 2026-07-28 closing the stream is the cancellation; on older
		// revisions a dropped connection is a cut-off too (SPEC §2.1).
		e.aw.cutOff(e.ctx)
		e.end(nil, ErrCallerGone)
		return true
	case stopping:
		e.end(e.aw.finishBeside(e.ctx, nil, ShuttingDown(e.aw.id)))
		return true
	}
	a, wake, done, err := e.aw.look(e.ctx)
	if errors.Is(err, ErrCallCancelled) {
		e.end(nil, err) // cancelled with notifications/cancelled: no reply (SPEC §2.1)
		return true
	}
	if done {
		e.end(e.aw.finishBeside(e.ctx, a, err))
		return true
	}
	e.mu.Lock()
	due := !e.progress.IsZero() && !time.Now().Before(e.progress)
	if due {
		e.sent++
		e.progress = time.Now().Add(e.every)
	}
	sent := e.sent
	e.timer.Reset(e.next(wake))
	e.mu.Unlock()
	if due && e.h.Progress != nil && e.h.Progress(sent) != nil {
		e.Gone()
	}
	return false
}

// end gives the outcome to Done and lets the wait go.
func (e *Expectation) end(a *askd.Ask, err error) {
	e.mu.Lock()
	e.over = true
	if e.timer != nil {
		e.timer.Stop()
	}
	e.mu.Unlock()
	e.h.Done(a, err)
	e.aw.stop()
}
