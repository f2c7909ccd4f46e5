package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
)

// # Deadlines
//
// Each kind's deadline is set when the ask is created (create.go: a question
// --question-timeout, a permission prompt --approval-timeout, attention asks
// and request_approval none). An ask pending past its deadline expires:
// cancelled with reason timeout, by askd, with a timed_out row and its tell
// queued, whichever comes first of
//
//   - the sweeper (ExpireDue, each second: Service.Run), whether or not
//     anyone waits;
//   - a wait's look at it past the deadline (poll, through expireRetrying);
//   - a person settling it (settle finds it overdue: ECONFLICT, timed out);
//   - a list of pending asks (expireBeforeListing).
//
// Each reads the ask again in its own transaction, and writers take turns
// (askd.Store.Update): an ask times out once. A timeout is never reported as
// a person's refusal.

// overdue reports whether a is pending past its deadline at now.
func overdue(a *askd.Ask, now time.Time) bool {
	return a.Pending() && a.Deadline != nil && !a.Deadline.After(now)
}

// expireTx cancels the overdue ask a with reason timeout at now, in tx: it
// stores it, queues its tell delivery and records the timed_out event. It
// reports whether the delivery is for the worker to send (enqueueTell).
func (s *Service) expireTx(ctx context.Context, tx askd.Tx, a *askd.Ask, now time.Time) (send bool, err error) {
	a.Settle(askd.StatusCancelled, askd.ReasonTimeout, nil, "askd", now)
	if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
		return false, err
	}
	if send, err = s.enqueueTell(ctx, tx, a); err != nil {
		return send, err
	}
	return send, s.record(ctx, tx, a, askd.ActionTimedOut, "askd", "no one answered in time")
}

// expire cancels ask id with reason timeout if it is pending past its deadline,
// and returns it as it then is.
func (s *Service) expire(ctx context.Context, id int64) (*askd.Ask, error) {
	var out *askd.Ask
	var settled, send bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		out, settled, send = a, false, false
		now := s.now()
		if !overdue(a, now) {
			return nil
		}
		settled = true
		send, err = s.expireTx(ctx, tx, a, now)
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
		due, err = tx.Asks.FindAsks(ctx, askd.AskFilter{Status: askd.StatusPending, DeadlineBefore: s.now()})
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

// expireBeforeListing expires the asks whose deadline has passed before a list
// of pending asks is read, so that no list shows one as pending past its
// deadline, whether or not the sweeper (Run, each second) has come to it,
// as right after a start. It writes only when there are such asks. A
// failure is logged and the list read as it is: reading must not depend on
// writes working.
func (s *Service) expireBeforeListing(ctx context.Context) {
	if err := s.ExpireDue(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("expire asks before listing", "err", err)
	}
}

// expireRetrying is expire for a wait on ask id until until (see
// retryUnavailable).
func (s *Service) expireRetrying(ctx context.Context, id int64, until time.Time) (*askd.Ask, error) {
	var a *askd.Ask
	err := s.retryUnavailable(ctx, until, func() (err error) {
		a, err = s.expire(ctx, id)
		return err
	})
	return a, waitUnavailable(id, err)
}
