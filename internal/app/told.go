package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/askd-dev/askd"
)

// # Telling the agent
//
// An ask is told once the agent has been given its outcome: Ask.ToldAt is
// set and its history has one told row saying by what. Whatever the client
// does, an outcome is told exactly once. The routes that tell, each inside
// the transaction that reads the ask, all through markTold:
//
//   - a waiting call's return (outcome.go: the blocking face records it
//     before returning, the parked face after the reply is written);
//   - an agent reading its settled ask (Check: check_ask {id}, GET
//     /api/asks/{id}, askd check);
//   - the session's untold outcomes taken at once (tellSession: the Stop
//     hook, check_ask {}, an agent's GET /api/asks);
//   - a channel bridge's report that it typed the text in (ChannelTold);
//   - an agent's report that it handed on an outcome it read untold
//     (MarkTold: POST /api/asks/{id}/told, after a keep_untold read);
//   - the delivery worker's send to a webhook or command (Delivered).
//
// markTold is the one writer of the told state outside the stores: whoever
// tells first marks it (and the pending tell delivery sent), and every later
// route finds ToldAt set and tells nothing (writers take turns:
// askd.Store.Update). A settlement that leaves the agent nothing to be told
// of (it withdrew the ask itself; a relayed prompt its terminal answered) is
// told as it settles (nothingToTell).

// markTold marks a told at now by actor, how saying by what (its told row's
// note), and its pending tell delivery sent, unless a was told already; it
// reports whether it marked it. a must have been read in tx.
func (s *Service) markTold(ctx context.Context, tx askd.Tx, a *askd.Ask, actor, how string) (bool, error) {
	// Once: writers take turns (askd.Store.Update), so a read in tx sees an earlier route's mark.
	if a.Pending() || a.ToldAt != nil {
		return false, nil
	}
	now := s.now()
	a.ToldAt, a.UpdatedAt = &now, now
	if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
		return false, err
	}
	if err := s.deliverySent(ctx, tx, a, now); err != nil {
		return false, err
	}
	return true, s.record(ctx, tx, a, askd.ActionTold, actor, how)
}

// deliverySent marks a's pending tell delivery, if any, sent at now: it was
// told another way.
func (s *Service) deliverySent(ctx context.Context, tx askd.Tx, a *askd.Ask, now time.Time) error {
	if !a.ToBeTold || a.SettledAt == nil {
		return nil
	}
	d, err := tx.Deliveries.Delivery(ctx, askd.TellKey(a))
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return nil // settled before deliveries existed
	}
	if err != nil || d.Status != askd.DeliveryPending {
		return err
	}
	d.Status, d.NextAt, d.ClaimedUntil, d.LastError, d.UpdatedAt = askd.DeliverySent, nil, nil, "", now
	return tx.Deliveries.UpdateDelivery(ctx, d)
}

// nothingToTell marks a, being settled at now by the agent's own act, told
// at once: there is nothing to tell it. The settlement stores it.
func nothingToTell(a *askd.Ask, now time.Time) { a.ToldAt = &now }

// Check returns an agent's ask as it is now. The first check of a settled ask
// tells it; later checks return the same outcome.
func (s *Service) Check(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	a, err := s.Get(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return s.tellOutcome(ctx, c, a, "checked")
}

// MarkTold records that agent c handed on the outcome of its settled ask
// id, read untold (Wait.KeepUntold; keep_untold over HTTP): the ask is
// marked told, a told row saying "handed on", and any pending tell of it
// sent. It returns the ask as told. Of several marks of one ask, one marks
// it: any other, before or after, is ECONFLICT with the ask, told_at set,
// and changes nothing, so a caller learns whether its mark was the one (of
// two MCP gates that read one decision, only that one uses it: one
// approval, one call). Errors: EFORBIDDEN for non-agents; ENOTFOUND for an
// ask c may not read; ECONFLICT with the ask when it is pending (nothing
// to tell yet) or was told already.
func (s *Service) MarkTold(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens mark their asks told")
	}
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id)
		if askd.ErrorCode(err) == askd.ENOTFOUND || err == nil && !readable(c, a) {
			return askd.Errorf(askd.ENOTFOUND, "ask %d not found", id)
		}
		if err != nil {
			return err
		}
		out = a
		// One mark marks it: writers take turns (askd.Store.Update), so a later mark reads the earlier's told_at.
		switch {
		case a.Pending():
			return &askd.Error{Code: askd.ECONFLICT, Message: fmt.Sprintf("ask %d is pending: it has no outcome to tell yet", a.ID), Ask: a}
		case a.ToldAt != nil:
			return &askd.Error{Code: askd.ECONFLICT, Message: fmt.Sprintf("ask %d was told already, at %s: its outcome reached the agent before", a.ID, a.ToldAt.Format(time.RFC3339)), Ask: a}
		}
		_, err = s.markTold(ctx, tx, a, c.Name, "handed on")
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// tellOutcome is Check of an ask the caller has just read (through Get or a
// wait): the agent is being given a's outcome, told how. It reads again only
// to mark it told, the first time.
func (s *Service) tellOutcome(ctx context.Context, c askd.Caller, a *askd.Ask, how string) (*askd.Ask, error) {
	if a.Pending() || a.ToldAt != nil {
		return a, nil
	}
	id := a.ID
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		out = a
		_, err = s.markTold(ctx, tx, a, c.Name, how)
		return err
	})
	return out, err
}

// CheckAll is check_ask {} (and an agent's GET /api/asks): the calling
// session's pending asks, then the settled ones it is to be told of and has
// not been, with their outcomes, which this tells (the agent is given them
// now), so an agent whose blocking call was cut off always finds its ask
// and its answer again (SPEC §2.4).
func (s *Service) CheckAll(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	pending, err := s.Open(ctx, c)
	if err != nil {
		return nil, err
	}
	told, err := s.tellSession(ctx, c, "checked")
	return append(pending, told...), err
}

// tellSession returns the session's settled asks that are to be told and
// have not been, oldest settled first, and marks them told (how: by what,
// for their told rows): the caller gives them to the agent now. A tell a
// channel bridge holds the lease of is left to it.
func (s *Service) tellSession(ctx context.Context, c askd.Caller, how string) ([]*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens are told of their asks")
	}
	var out []*askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Sessions.LockSession(ctx, c.Name, c.Session); err != nil {
			return err
		}
		asks, err := tx.Asks.FindAsks(ctx, sessionFilter(c))
		if err != nil {
			return err
		}
		out = out[:0]
		now := s.now()
		for _, a := range asks {
			if a.Pending() || !a.ToBeTold || a.ToldAt != nil {
				continue
			}
			if held, err := heldByBridge(ctx, tx, a, now); err != nil || held {
				if err != nil {
					return err
				}
				continue // a channel bridge is telling it now (bridge.go)
			}
			out = append(out, a)
		}
		slices.SortFunc(out, func(a, b *askd.Ask) int { return a.SettledAt.Compare(*b.SettledAt) })
		for _, a := range out {
			if _, err := s.markTold(ctx, tx, a, c.Name, how); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// pendingToBeTold returns the session's pending asks whose outcome is to be
// told to the agent (what a Stop hook with a wait waits for).
func (s *Service) pendingToBeTold(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	pending, err := s.Open(ctx, c)
	return slices.DeleteFunc(pending, func(a *askd.Ask) bool { return !a.ToBeTold }), err
}

// markToBeTold records that a call returned c's ask id pending (an
// approval's grace window passed), so its outcome must be told to the agent
// later. It returns the ask as it is: if a decision landed meanwhile, the
// caller returns that instead.
func (s *Service) markToBeTold(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		if !readable(c, a) {
			return askd.Errorf(askd.ENOTFOUND, "ask %d not found", id)
		}
		out = a
		// Another session of the token waiting on a keyed approval: its
		// outcome is told, if at all, to the session that made it.
		if !a.Pending() || a.ToBeTold || !visible(c, a) {
			return nil
		}
		a.ToBeTold = true
		return tx.Asks.UpdateAsk(ctx, a)
	})
	return out, err
}
