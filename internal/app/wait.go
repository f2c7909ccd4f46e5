package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

// Wait blocks until ask id settles, its deadline passes (the ask is then
// cancelled with reason timeout), until passes (the pending ask is returned),
// or ctx ends (ctx.Err()). It is woken by the store's change notifications,
// never by polling. When the service closes, it returns EUNAVAILABLE; when
// c's token is revoked, EUNAUTHORIZED.
func (s *Service) Wait(ctx context.Context, c askd.Caller, id int64, until time.Time) (*askd.Ask, error) {
	w := s.hub.add(id, nil) // before the first read: a change after it still wakes us
	defer s.hub.remove(w)
	revoked, release := s.Hold(c)
	defer release()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		a, wake, _, err := s.poll(ctx, c, id, until, nil)
		if err != nil || wake.IsZero() {
			return a, err
		}
		timer.Reset(time.Until(wake))
		select {
		case <-w.ch:
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.closing:
			return a, ShuttingDown(id)
		case <-revoked:
			return nil, errRevoked()
		}
	}
}

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

// poll is one look of Wait at ask id. When the wait is over (the ask settled;
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
			a, err := s.expireForWait(ctx, id, until)
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

// expire cancels ask id with reason timeout if it is pending past its deadline,
// and returns it as it then is.
func (s *Service) expire(ctx context.Context, id int64) (*askd.Ask, error) {
	var out *askd.Ask
	var settled, send bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		out, settled, send = a, false, false
		now := s.now()
		if !overdue(a, now) {
			return nil
		}
		settled = true
		send, err = s.timeOut(ctx, tx, a, now)
		return err
	})
	if err == nil && settled {
		s.Metrics.settled(out)
	}
	if err == nil && send {
		s.kickDeliveries()
	}
	return out, err
}

// ExpireDue cancels every pending ask whose deadline has passed, whether or
// not anyone still waits on it.
func (s *Service) ExpireDue(ctx context.Context) error {
	var due []*askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		due, err = tx.FindAsks(ctx, askd.AskFilter{Status: askd.StatusPending, DeadlineBefore: s.now()})
		return err
	})
	if err != nil {
		return err
	}
	for _, a := range due {
		if _, err := s.expire(ctx, a.ID); err != nil {
			return err
		}
	}
	return nil
}

// settleOverdue times out the asks whose deadline has passed before a list
// of pending asks is read, so that no list shows one as pending past its
// deadline, whether or not the sweeper (Run, each second) has come to it,
// as right after a start. It writes only when there are such asks. A
// failure is logged and the list read as it is: reading must not depend on
// writes working.
func (s *Service) settleOverdue(ctx context.Context) {
	if err := s.ExpireDue(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("expire asks before listing", "err", err)
	}
}

// waitAny blocks until any of c's asks ids changes, until passes, ctx ends
// or the service closes. It fails with EUNAUTHORIZED when c's token is
// revoked meanwhile, and returns nil otherwise.
func (s *Service) waitAny(ctx context.Context, c askd.Caller, ids []int64, until time.Time) error {
	revoked, release := s.Hold(c)
	defer release()
	ws := make([]*waiter, len(ids))
	wake := make(chan struct{}, 1)
	for i, id := range ids {
		ws[i] = s.hub.add(id, nil)
	}
	defer func() {
		for _, w := range ws {
			s.hub.remove(w)
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	for _, w := range ws {
		go func(w *waiter) {
			select {
			case <-w.ch:
				signal(wake)
			case <-stop:
			}
		}(w)
	}
	// The caller read these asks pending before we registered: one settled
	// in between would never wake us, so look again now that we listen.
	var settled bool
	_ = s.store.View(ctx, func(tx askd.Tx) error {
		for _, id := range ids {
			a, err := tx.Ask(ctx, id)
			if err != nil || !a.Pending() {
				settled = true
				return nil
			}
		}
		return nil
	})
	if settled {
		return nil
	}
	d := time.Until(until)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-ctx.Done():
	case <-s.closing:
	case <-revoked:
		return errRevoked()
	}
	return nil
}
