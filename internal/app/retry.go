package app

import (
	"context"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// A wait outlives a short database outage: a read that fails because the
// database is unavailable (a terminated connection, a server restarting) is
// tried again, instead of ending a call whose answer may already be stored.
// With PostgreSQL a cut under the LISTEN connection wakes every waiter at once
// (Change{Reset}), and their re-reads are the first to meet the pool's
// connections cut along with it.

// The backoff between tries: the first retry comes soon, for one dead
// connection in the pool; later ones slow down to a second while the
// database stays away.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = time.Second
)

// retryUnavailable calls fn until it returns anything but an EUNAVAILABLE
// error, waiting retryFirst after the first failure and twice as long after
// each next one, up to retryMax. It gives up when until (unless zero) passes
// or the service closes, returning fn's last error, and when ctx ends,
// returning ctx.Err().
func (s *Service) retryUnavailable(ctx context.Context, until time.Time, fn func() error) error {
	return backoff{first: retryFirst, max: retryMax}.retry(ctx, s.now, until, s.closing, fn)
}

// getForWait is Get for a wait on ask id until until (see
// retryUnavailable). With call, it also reports, from the same snapshot,
// whether that MCP call's cancellation was recorded: one read transaction
// for both, on the way of every answer to its waiting call.
func (s *Service) getForWait(ctx context.Context, c askd.Caller, id int64, until time.Time, call *askd.MCPCallKey) (a *askd.Ask, cancelled bool, err error) {
	err = s.retryUnavailable(ctx, until, func() (err error) {
		if a, cancelled, err = s.readForWait(ctx, id, call); err != nil || cancelled {
			a = nil
			return err
		}
		if !readable(c, a) {
			a = nil
			return askd.Errorf(askd.ENOTFOUND, "ask %d not found", id)
		}
		return nil
	})
	return a, cancelled, waitUnavailable(id, err)
}

// readForWait reads ask id, and with call whether that call's cancellation
// was recorded (then without the ask), in one snapshot: without call by
// Store.ReadAsk (on PostgreSQL one statement, no transaction around it, on
// the way of an answer to its waiting call in another process when the
// notification could not carry the ask), with call in one read transaction.
func (s *Service) readForWait(ctx context.Context, id int64, call *askd.MCPCallKey) (a *askd.Ask, cancelled bool, err error) {
	if call == nil {
		a, err = s.store.ReadAsk(ctx, id)
		return a, false, err
	}
	err = s.store.View(ctx, func(tx askd.Tx) error {
		mc, err := tx.MCPCalls.MCPCall(ctx, *call)
		if err != nil && askd.ErrorCode(err) != askd.ENOTFOUND {
			return err
		}
		if cancelled = err == nil && mc.Cancelled; cancelled {
			return nil
		}
		a, err = tx.Asks.Ask(ctx, id)
		return err
	})
	return a, cancelled, err
}

// waitUnavailable is the error a wait on ask id ends with when the database
// stayed unavailable to its end: like ShuttingDown it names the ask, whose
// answer may be stored already, and where to find it. Other errors are
// returned as they are.
func waitUnavailable(id int64, err error) error {
	if askd.ErrorCode(err) != askd.EUNAVAILABLE {
		return err
	}
	return fmt.Errorf("%w: %w", askd.Errorf(askd.EUNAVAILABLE,
		"the database is unavailable; call check_ask with id %d for the answer shortly", id), err)
}

// backoff is how retry spaces its tries: first after the first failure,
// twice as long after each next one, never more than max.
type backoff struct {
	first, max time.Duration
}

// retry is retryUnavailable with its clock (for until) and the channel that
// stops it given.
func (b backoff) retry(ctx context.Context, now func() time.Time, until time.Time, stop <-chan struct{}, fn func() error) error {
	wait := b.first
	for {
		err := fn()
		if askd.ErrorCode(err) != askd.EUNAVAILABLE {
			return err
		}
		d := wait
		if !until.IsZero() {
			left := until.Sub(now())
			if left <= 0 {
				return err
			}
			d = min(d, left) // one last try as until passes
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-stop:
			t.Stop()
			return err
		}
		wait = min(2*wait, b.max)
	}
}
