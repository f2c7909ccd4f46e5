package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/askd-dev/askd"
)

// # The outcome of an ask, as its agent learns it
//
// Every front end that holds an agent until a person answers makes one
// call here and shapes the result for its wire:
//
//   - AwaitOutcome, the blocking face, on the caller's goroutine: POST
//     /api/asks?wait=, GET /api/asks/{id}?wait=, the Claude Code hooks
//     (PreToolUse, PermissionRequest), MCP calls on the SDK's sessions
//     (in-memory, stdio);
//   - Expect, the completion face, for calls parked on their connection
//     without a goroutine (MCP tools/call over streamable HTTP): Done is
//     called once with the outcome;
//   - StopHook (stophook.go), which waits for any of a session's asks.
//
// What a wait is (Wait): one of the caller's asks, until when (Until; zero:
// the ask's own deadline, set by its kind when it was created: create.go),
// and what its end means (AwaitMode). Its states:
//
//	waiting ──answer/dismissal──────────▶ settled ─▶ told (markTold, told.go)
//	   │  ──deadline (expire.go)────────▶ settled (cancelled, timeout) ─▶ told
//	   │  ──Until passes, AwaitGrace────▶ returned pending, to be told later
//	   │  ──Until passes, AwaitCheck────▶ returned as it is
//	   │  ──caller gone (ctx ends, Gone)▶ cut off: pending, to be told later
//	   │  ──notifications/cancelled─────▶ cut off, and no reply (ErrCallCancelled)
//	   └──server stops──────────────────▶ ShutdownError: no outcome now
//
// A wait registers with the hub (hub.go) before it first reads the ask, so
// an answer that races its start is never lost; it is woken by the store's
// change notifications (in-process after a SQLite commit, LISTEN/NOTIFY on
// PostgreSQL: Service.Run), never by polling, and looks again at the ask's
// deadline or Until.
//
// The caller going away — its client's own timeout, notifications/cancelled,
// a closed stream, a dropped connection — is a cut-off, not a withdrawal
// (SPEC §2.1): the ask stays pending to its own deadline and is marked to be
// told, so an answer given meanwhile reaches the session once, at its Stop
// hook, check_ask or channel; the same call again re-attaches to it (Create)
// and returns that answer. Only Withdraw takes an ask back.

// Wait is what a front end waits for: one of the caller's asks.
type Wait struct {
	Ask  int64
	Mode AwaitMode
	// Until ends the wait before the ask's deadline: a check's wait, an
	// approval's grace window (Grace). Zero: only the ask's deadline.
	Until time.Time
	// Call is the MCP call (of a 2025 protocol revision) the wait serves, so
	// that its notifications/cancelled, reaching any process, ends it
	// without a reply (Expect only).
	Call *CallRef
	// Progress is how often a wait still going reports so (its progress
	// callback): 0 for never.
	Progress time.Duration
}

// CallRef names an MCP call: its MCP session and JSON-RPC request id.
type CallRef struct{ MCPSession, Request string }

// Grace is how long a request for approval waits for a decision before it
// returns pending: its grace_seconds, else the server's --approval-grace.
func (s *Service) Grace(graceSeconds *int) time.Duration {
	if graceSeconds != nil {
		return time.Duration(*graceSeconds) * time.Second
	}
	return s.cfg.ApprovalGrace
}

// AwaitMode says what the end of a wait means.
type AwaitMode int

const (
	// AwaitAnswer: the caller returns the outcome (ask_user_question, a
	// permission prompt, a hook). An ask settled within the wait counts as
	// told by that return; a caller that goes away cuts the ask off.
	AwaitAnswer AwaitMode = iota
	// AwaitGrace: request_approval's grace window. Past Until, the ask is
	// returned pending and marked to be told once decided; a caller that goes
	// away cuts it off.
	AwaitGrace
	// AwaitCheck: check_ask's wait_seconds, GET ?wait=: the ask as it is at
	// the end (a settled one counts as told, as Check); a caller that goes
	// away changes nothing.
	AwaitCheck
)

// ErrCallCancelled ends a wait whose MCP call the client cancelled with
// notifications/cancelled, on whichever process that arrived: no response is
// to be sent for it (SPEC §2.1).
var ErrCallCancelled = errors.New("the client cancelled the call")

// ErrCallerGone ends an expected outcome whose caller went away (Gone): the
// ask was cut off, and there is no one to reply to.
var ErrCallerGone = errors.New("the caller went away")

// ShutdownError is what a wait on ask Ask ends with when the server stops
// (Service.Close): no outcome now, and the ask left as it is, for the caller
// to look at again once askd is back. Its code is EUNAVAILABLE (errors.As
// finds its *askd.Error); its words are for MCP clients, which call
// check_ask. A front end whose callers look again another way (plain HTTP,
// hooks) finds it with errors.As and says how in its own words.
type ShutdownError struct{ Ask int64 }

func (e *ShutdownError) Error() string { return e.Unwrap().Error() }

// Unwrap is the *askd.Error that carries the code and the MCP wording.
func (e *ShutdownError) Unwrap() error {
	return askd.Errorf(askd.EUNAVAILABLE, "server shutting down, call check_ask with id %d for the answer", e.Ask)
}

// ShuttingDown is the error a wait on ask id ends with when the server
// stops: a *ShutdownError.
func ShuttingDown(id int64) error { return &ShutdownError{Ask: id} }

// AwaitOutcome blocks until c's wait w is over and returns the outcome to
// give the agent: a settled ask, marked told before it returns (told.go);
// past an approval's grace window (AwaitGrace) the ask pending, marked to be
// told once decided; a check's (AwaitCheck) ask as it is. progress, when not
// nil and w.Progress > 0, is called every w.Progress while the ask is
// pending, with how many times it has been (1, 2, ...).
//
// When ctx ends, the ask is cut off (the caller went away; a check changes
// nothing) and ctx's error returned. When the server stops, a
// *ShutdownError; when c's token is revoked, EUNAUTHORIZED. A database that
// is unavailable is tried again until the wait's end (retry.go).
func (s *Service) AwaitOutcome(ctx context.Context, c askd.Caller, w Wait, progress func(n float64)) (*askd.Ask, error) {
	aw := s.startAwait(c, w, nil)
	defer aw.stop()
	var sent float64
	for {
		var tick time.Time
		if progress != nil && w.Progress > 0 {
			tick = time.Now().Add(w.Progress)
		}
		a, done, err := aw.wait(ctx, tick)
		if done {
			return aw.finish(context.WithoutCancel(ctx), a, err)
		}
		sent++
		progress(sent)
	}
}

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

// next is how long until the expectation must look again, at wake or when
// progress is due.
func (e *Expectation) next(wake time.Time) time.Duration {
	if !e.progress.IsZero() && e.progress.Before(wake) {
		wake = e.progress
	}
	return time.Until(wake)
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

// await is one wait in progress, the state both faces drive: registered with
// the hub before its first look, and stopped (stop) when over.
type await struct {
	svc   *Service
	c     askd.Caller
	id    int64
	until time.Time // zero: only the ask's deadline ends it
	mode  AwaitMode
	call  *askd.MCPCallKey // an old-revision MCP call, kept for its cancellation
	wake  chan struct{}    // waits on a goroutine of their own (wait)
	seen  *waiter          // what the last change told (waiter.last)
	stopW func()
}

// startAwait registers c's wait w with the hub, before any look, so no change
// is missed. kick, when not nil, is called each time the wait should look
// again (the ask changed, the token was revoked); it must not block. Waits
// without kick use wait.
func (s *Service) startAwait(c askd.Caller, w Wait, kick func()) *await {
	aw := &await{svc: s, c: c, id: w.Ask, until: w.Until, mode: w.Mode}
	if kick == nil {
		aw.wake = make(chan struct{}, 1)
		kick = func() { signal(aw.wake) }
	}
	aw.seen, aw.stopW = s.watch(c, w.Ask, kick)
	return aw
}

// track records the old-revision MCP call the wait serves, so that its
// notifications/cancelled, reaching any process, ends it (CallCancelled); a
// cancellation that overtook the call is found now.
func (w *await) track(ctx context.Context, call CallRef) error {
	k := callKey(w.c, call.MCPSession, call.Request)
	w.call = &k
	return w.svc.CallStarted(ctx, w.c, call.MCPSession, call.Request, w.id)
}

// look is one look at the wait. When it is over, done is true and a and err
// are its outcome, for finish; otherwise a is the pending ask and wake when
// to look again unless kicked first. A tracked call whose cancellation was
// recorded ends with ErrCallCancelled.
func (w *await) look(ctx context.Context) (a *askd.Ask, wake time.Time, done bool, err error) {
	if a := w.settledSeen(); a != nil {
		return a, time.Time{}, true, nil
	}
	// The call and the ask are read in one snapshot: an answer seen there
	// (the person answering a cut-off ask) comes with any cancellation
	// committed before it.
	a, wake, cancelled, err := w.svc.poll(ctx, w.c, w.id, w.until, w.call)
	if cancelled {
		return nil, time.Time{}, true, ErrCallCancelled
	}
	done = err != nil || wake.IsZero()
	return a, wake, done, err
}

// settledSeen is the ask as the change that woke the wait left it, when that
// settled it and can stand for reading it again: the store said how the ask
// is (askd.Change.Ask: on SQLite from a commit of this process, on
// PostgreSQL from any process's, in the notification), and no MCP call is
// tracked (whose cancellation only a read finds). This takes a read off the
// way of each answer to its waiting call, on PostgreSQL also when the
// answer was given on another process (the inbox side). Nil: look in the
// store.
func (w *await) settledSeen() *askd.Ask {
	if w.call != nil || w.seen == nil {
		return nil
	}
	a := w.seen.last.Load()
	if a == nil || a.ID != w.id || a.Pending() || !visible(w.c, a) || w.svc.live.isRevoked(w.c.TokenHash) {
		return nil
	}
	cp := *a
	return &cp
}

// wait blocks on the caller's goroutine until the wait is over (done, with
// its outcome for finish) or tick passes (a zero tick: never), returning the
// pending ask, so that the caller may report progress and wait again. When
// ctx ends, the ask is cut off (the caller went away) and ctx's error
// returned; when the service closes, ShuttingDown.
func (w *await) wait(ctx context.Context, tick time.Time) (a *askd.Ask, done bool, err error) {
	revoked, release := w.svc.Hold(w.c)
	defer release()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		a, wake, done, err := w.look(ctx)
		if ctx.Err() != nil {
			w.cutOff(context.WithoutCancel(ctx))
			return nil, true, ctx.Err()
		}
		if done {
			return a, true, err
		}
		if !tick.IsZero() && !tick.After(time.Now()) {
			return a, false, nil
		}
		if !tick.IsZero() && tick.Before(wake) {
			wake = tick
		}
		timer.Reset(time.Until(wake))
		select {
		case <-w.wake:
		case <-timer.C:
		case <-ctx.Done():
			w.cutOff(context.WithoutCancel(ctx))
			return nil, true, ctx.Err()
		case <-w.svc.closing:
			return a, true, ShuttingDown(w.id)
		case <-revoked:
			return nil, true, errRevoked()
		}
	}
}

// finish turns the wait's outcome into what the caller returns. Past an
// approval's grace the pending ask is marked to be told once decided. A
// settled ask's outcome goes back in the caller's reply, so it is told,
// marked before finish returns; not so a person's check.
func (w *await) finish(ctx context.Context, a *askd.Ask, err error) (*askd.Ask, error) {
	if err != nil {
		return nil, err
	}
	if !a.Pending() {
		if w.mode == AwaitCheck && w.c.Role != askd.RoleAgent {
			return a, nil
		}
		return w.retrying(ctx, func() (*askd.Ask, error) { return w.svc.tellOutcome(ctx, w.c, a, "checked") })
	}
	if w.mode == AwaitGrace {
		return w.retrying(ctx, func() (*askd.Ask, error) { return w.svc.markToBeTold(ctx, w.c, a.ID) })
	}
	return a, nil
}

// retrying runs one of Finish's writes, tried again while the database is
// unavailable (retryUnavailable): the outcome may be stored already, and a
// short outage must not end the call without it.
func (w *await) retrying(ctx context.Context, write func() (*askd.Ask, error)) (*askd.Ask, error) {
	var out *askd.Ask
	err := w.svc.retryUnavailable(ctx, time.Time{}, func() (err error) {
		out, err = write()
		return err
	})
	return out, waitUnavailable(w.id, err)
}

// finishBeside is finish for a reply written at once (a parked MCP call's
// result): an ask that is also to be told (ToBeTold) is marked told
// first, as Check does, so the queued tell is not sent as well; for any other
// the record is written after the reply instead of before it, which takes a
// database write off the answer's way back to the agent (if askd stops in
// between, check_ask and asking again give the same outcome once more). It
// waits afterReply, so that the reply and the agent's reading of it have the
// CPUs first.
func (w *await) finishBeside(ctx context.Context, a *askd.Ask, err error) (*askd.Ask, error) {
	if err != nil || a.Pending() || a.ToBeTold || w.mode == AwaitCheck {
		return w.finish(ctx, a, err)
	}
	time.AfterFunc(afterReply, func() {
		if _, err := w.svc.tellOutcome(context.WithoutCancel(ctx), w.c, a, "checked"); err != nil {
			w.svc.cfg.Logger.Warn("record that the agent was told", "id", a.ID, "err", err)
		}
	})
	return a, nil
}

// afterReply is how long the bookkeeping of an answer that can wait (the
// told record above, the inbox feed's read of the commit) lets the calls the
// answer woke write their results first. On a small machine, with the agent
// on it too, that work shared the CPUs with the result and with the agent's
// reading of it: 0.3 ms of the 1.9 ms from answer to returned call at p50
// on 2 cores (docs/benchmarks.md).
const afterReply = time.Millisecond

// cutOff records that the caller went away without the outcome: a pending
// ask stays pending, marked to be told once settled (a cut_off event says
// so in its history and to the inbox). Checks (AwaitCheck) change nothing.
func (w *await) cutOff(ctx context.Context) {
	if w.mode == AwaitCheck {
		return
	}
	if err := w.svc.cutOff(ctx, w.c, w.id); err != nil {
		w.svc.cfg.Logger.Warn("record a cut-off call", "id", w.id, "err", err)
	}
}

// stop ends the wait: it stops watching, and forgets a tracked call.
func (w *await) stop() {
	w.stopW()
	if w.call != nil {
		if err := w.svc.CallEnded(context.Background(), w.c, w.call.MCPSession, w.call.RequestID); err != nil {
			w.svc.cfg.Logger.Warn("forget MCP call", "id", w.id, "err", err)
		}
	}
}

// cutOff marks c's pending ask id to be told once settled, with a cut_off
// event (each cut-off gets one: it is also how another process holding the
// call hears of a cancellation). A settled ask is left as it is.
func (s *Service) cutOff(ctx context.Context, c askd.Caller, id int64) error {
	return s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		// Attention asks never block and are always told: nothing to record.
		if !visible(c, a) || !a.Pending() || a.Kind.IsAttention() {
			return nil
		}
		a.ToBeTold = true
		a.UpdatedAt = s.now()
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		return s.record(ctx, tx, a, askd.ActionCutOff, c.Name, "the agent stopped waiting; the answer will be told to its session")
	})
}
