package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

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
			a, err := tx.Asks.Ask(ctx, id)
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
