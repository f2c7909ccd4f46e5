package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

// The wait both faces of the outcome drive (outcome.go): registered before
// its first look, woken by the hub, looking again at the deadline or Until.

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
	// keepUntold: a settled ask is returned untold (Wait.KeepUntold).
	keepUntold bool
}

// startAwait registers c's wait w with the hub, before any look, so no change
// is missed. kick, when not nil, is called each time the wait should look
// again (the ask changed, the token was revoked); it must not block. Waits
// without kick use wait.
func (s *Service) startAwait(c askd.Caller, w Wait, kick func()) *await {
	aw := &await{svc: s, c: c, id: w.Ask, until: w.Until, mode: w.Mode, keepUntold: w.KeepUntold}
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
	if a == nil || a.ID != w.id || a.Pending() || !readable(w.c, a) || w.svc.live.isRevoked(w.c.TokenHash) {
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
		timer.Reset(w.sleep(wake, tick))
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

// sleep is how long from now until wake, a time on the service's clock
// (poll's), or until tick, one on the machine's (zero: none), whichever
// comes first. Each is counted on its own clock: a test's clock set apart
// from the machine's must not make a wait look again at once, every time.
func (w *await) sleep(wake, tick time.Time) time.Duration {
	d := wake.Sub(w.svc.now())
	if t := time.Until(tick); !tick.IsZero() && t < d {
		d = t
	}
	return d
}

// finish turns the wait's outcome into what the caller returns. Past an
// approval's grace the pending ask is marked to be told once decided. A
// settled ask's outcome goes back in the caller's reply, so it is told,
// marked before finish returns; not so a person's check, nor a read that
// keeps it untold (the caller marks it told once it has handed it on).
func (w *await) finish(ctx context.Context, a *askd.Ask, err error) (*askd.Ask, error) {
	if err != nil {
		return nil, err
	}
	if !a.Pending() {
		if w.keepUntold || w.mode == AwaitCheck && w.c.Role != askd.RoleAgent {
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
	if err != nil || a.Pending() || a.ToBeTold || w.mode == AwaitCheck || w.keepUntold {
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
// call hears of a cancellation). A settled ask is left as it is. A form ask
// is withdrawn instead (form.go): nothing could carry a later answer to the
// MCP server that asked.
func (s *Service) cutOff(ctx context.Context, c askd.Caller, id int64) error {
	var withdrawn *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		withdrawn = nil
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		// Attention asks never block and are always told: nothing to record.
		if !visible(c, a) || !a.Pending() || a.Kind.IsAttention() {
			return nil
		}
		if a.Kind == askd.KindForm {
			withdrawn = a
			return s.withdrawForm(ctx, tx, c, a)
		}
		a.ToBeTold = true
		a.UpdatedAt = s.now()
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		return s.record(ctx, tx, a, askd.ActionCutOff, c.Name, "the agent stopped waiting; the answer will be told to its session")
	})
	if err == nil && withdrawn != nil {
		s.Metrics.settled(withdrawn)
	}
	return err
}

// poll is one look of a wait at ask id. When the wait is over (the ask settled;
// its deadline passed, and it is now cancelled as timed out; or until passed)
// it returns the ask and a zero wake. Otherwise it returns the pending ask and
// the time to look again if nothing wakes the caller first. Waits without a
// goroutine of their own (Await with a kick: the MCP server's parked calls)
// pair it with watch, registered before the first look so that no change is
// missed. Once c's token is found revoked (see watch) it fails with
// EUNAUTHORIZED. A database that is unavailable is tried again until until
// (retryUnavailable).
//
// With call, the MCP call the wait serves is read in the same snapshot as the
// ask; cancelled reports that its cancellation was recorded (the wait then
// ends without an outcome, and a and wake are not set).
func (s *Service) poll(ctx context.Context, c askd.Caller, id int64, until time.Time, call *askd.MCPCallKey) (_ *askd.Ask, wake time.Time, cancelled bool, _ error) {
	if s.live.isRevoked(c.TokenHash) {
		return nil, time.Time{}, false, errRevoked()
	}
	a, cancelled, err := s.getForWait(ctx, c, id, until, call)
	if err != nil || cancelled || !a.Pending() {
		return a, time.Time{}, cancelled, err
	}
	now := s.now()
	wake = until
	if a.Deadline != nil && (until.IsZero() || a.Deadline.Before(until)) {
		if !a.Deadline.After(now) {
			a, err := s.expireRetrying(ctx, id, until)
			return a, time.Time{}, false, err
		}
		wake = *a.Deadline
	}
	if wake.IsZero() {
		return a, now.Add(time.Hour), false, nil // no deadline: only a change ends it
	}
	if !wake.After(now) {
		return a, time.Time{}, false, nil
	}
	return a, wake, false, nil
}

// watch calls fn each time ask id may have changed, and when c's token is
// found revoked, until stop is called. fn runs on the notifying goroutine and
// must not block.
func (s *Service) watch(c askd.Caller, id int64, fn func()) (w *waiter, stop func()) {
	w = s.hub.add(id, fn)
	_, release := s.live.hold(c.TokenHash, fn)
	return w, func() { s.hub.remove(w); release() }
}
