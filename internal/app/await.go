package app

import (
	"context"
	"errors"
	"time"

	"github.com/askd-dev/askd"
)

// # Waiting for a person
//
// Every front end that holds an agent until a person answers — a blocking
// MCP tool call (parked without a goroutine, or on the SDK's), POST
// /api/asks?wait=, GET /api/asks/{id}?wait=, check_ask's wait_seconds, a
// Claude Code hook — drives one Await: what is awaited (one of the caller's
// asks), until when, and what its end means (AwaitMode). The front ends keep
// only decoding, result shapes and transport.
//
// The caller going away — its client's own timeout, notifications/cancelled,
// a closed stream, a dropped connection — is a cut-off, not a withdrawal
// (SPEC §2.1): the ask stays pending to its own deadline and is marked to be
// told, so an answer given meanwhile reaches the session once, at its Stop
// hook, check_ask or channel; the same call again re-attaches to it (Create)
// and returns that answer. Only Withdraw takes an ask back.

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

// Await is one wait in progress for one of an agent's asks; see the comment
// above. Start it with Service.Await, end it with Stop.
type Await struct {
	svc   *Service
	c     askd.Caller
	id    int64
	until time.Time // zero: only the ask's deadline ends it
	mode  AwaitMode
	call  *askd.MCPCallKey // an old-revision MCP call, kept for its cancellation
	wake  chan struct{}    // waits on a goroutine of their own (Wait)
	seen  *waiter          // what the last change told (waiter.last)
	stop  func()
}

// Await starts c's wait for ask id until until (zero: the ask's deadline).
// kick, when not nil, is called each time the wait should look again (the
// ask changed, the token was revoked); it must not block. Waits without kick
// use Wait. Registered before any look, so no change is missed.
func (s *Service) Await(c askd.Caller, id int64, until time.Time, mode AwaitMode, kick func()) *Await {
	w := &Await{svc: s, c: c, id: id, until: until, mode: mode}
	if kick == nil {
		w.wake = make(chan struct{}, 1)
		kick = func() { signal(w.wake) }
	}
	w.seen, w.stop = s.watch(c, id, kick)
	return w
}

// Track records the old-revision MCP call (mcpSession, requestID) this wait
// serves, so that its notifications/cancelled, reaching any process, ends it
// (CallCancelled); a cancellation that overtook the call is found now.
func (w *Await) Track(ctx context.Context, mcpSession, requestID string) error {
	k := callKey(w.c, mcpSession, requestID)
	w.call = &k
	return w.svc.CallStarted(ctx, w.c, mcpSession, requestID, w.id)
}

// Look is one look at the wait. When it is over, done is true and a and err
// are its outcome, for Finish; otherwise a is the pending ask and wake when
// to look again unless kicked first. A tracked call whose cancellation was
// recorded ends with ErrCallCancelled.
func (w *Await) Look(ctx context.Context) (a *askd.Ask, wake time.Time, done bool, err error) {
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
func (w *Await) settledSeen() *askd.Ask {
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

// Wait blocks on the caller's goroutine until the wait is over (done, with
// its outcome for Finish) or tick passes (a zero tick: never), returning the
// pending ask, so that the caller may send progress and wait again. When ctx
// ends, the ask is cut off (the caller went away) and ctx's error returned;
// when the service closes, ShuttingDown.
func (w *Await) Wait(ctx context.Context, tick time.Time) (a *askd.Ask, done bool, err error) {
	revoked, release := w.svc.Hold(w.c)
	defer release()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		a, wake, done, err := w.Look(ctx)
		if ctx.Err() != nil {
			w.CutOff(context.WithoutCancel(ctx))
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
			w.CutOff(context.WithoutCancel(ctx))
			return nil, true, ctx.Err()
		case <-w.svc.closing:
			return a, true, ShuttingDown(w.id)
		case <-revoked:
			return nil, true, errRevoked()
		}
	}
}

// Finish turns the wait's outcome into what the caller returns. Past an
// approval's grace the pending ask is marked to be told once decided. A
// settled ask's outcome goes back in the caller's reply, so it counts as
// told, recorded before Finish returns.
func (w *Await) Finish(ctx context.Context, a *askd.Ask, err error) (*askd.Ask, error) {
	if err != nil || !a.Pending() {
		return w.finish(ctx, a, err)
	}
	if w.mode == AwaitGrace {
		return w.retrying(ctx, func() (*askd.Ask, error) { return w.svc.markToBeTold(ctx, w.c, a.ID) })
	}
	return a, nil
}

// retrying runs one of Finish's writes, tried again while the database is
// unavailable (retryUnavailable): the outcome may be stored already, and a
// short outage must not end the call without it.
func (w *Await) retrying(ctx context.Context, write func() (*askd.Ask, error)) (*askd.Ask, error) {
	var out *askd.Ask
	err := w.svc.retryUnavailable(ctx, time.Time{}, func() (err error) {
		out, err = write()
		return err
	})
	return out, waitUnavailable(w.id, err)
}

// FinishBeside is Finish for a reply written at once (a blocking MCP call's
// result): an ask that is also to be told (ToBeTold) is marked told
// first, as Check does, so the queued tell is not sent as well; for any other
// the record is written after the reply instead of before it, which takes a
// database write off the answer's way back to the agent (if askd stops in
// between, check_ask and asking again give the same outcome once more). It
// waits afterReply, so that the reply and the agent's reading of it have the
// CPUs first.
func (w *Await) FinishBeside(ctx context.Context, a *askd.Ask, err error) (*askd.Ask, error) {
	if err != nil || a.Pending() || a.ToBeTold || w.mode == AwaitCheck {
		return w.Finish(ctx, a, err)
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

// finish is Finish of a settled ask or an error.
func (w *Await) finish(ctx context.Context, a *askd.Ask, err error) (*askd.Ask, error) {
	if err != nil {
		return nil, err
	}
	return w.retrying(ctx, func() (*askd.Ask, error) { return w.svc.tellOutcome(ctx, w.c, a, "checked") })
}

// CutOff records that the caller went away without the outcome: a pending
// ask stays pending, marked to be told once settled (a cut_off event says
// so in its history and to the inbox). Checks (AwaitCheck) change nothing.
func (w *Await) CutOff(ctx context.Context) {
	if w.mode == AwaitCheck {
		return
	}
	if err := w.svc.cutOff(ctx, w.c, w.id); err != nil {
		w.svc.cfg.Logger.Warn("record a cut-off call", "id", w.id, "err", err)
	}
}

// Stop ends the wait: it stops watching, and forgets a tracked call.
func (w *Await) Stop() {
	w.stop()
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
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		// Attention asks never block and are always told: nothing to record.
		if !visible(c, a) || !a.Pending() || a.Kind.IsAttention() {
			return nil
		}
		a.ToBeTold = true
		a.UpdatedAt = s.now()
		if err := tx.UpdateAsk(ctx, a); err != nil {
			return err
		}
		return s.record(ctx, tx, a, askd.ActionCutOff, c.Name, "the agent stopped waiting; the answer will be told to its session")
	})
}
