package app

import (
	"context"
	"slices"

	"github.com/askd-dev/askd"
)

// Get returns one ask. Agents see only their session's asks (their own
// token's, in the session they name): any other id is ENOTFOUND, as is an id
// that does not exist.
func (s *Service) Get(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	var a *askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		a, err = tx.Ask(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !visible(c, a) {
		return nil, askd.Errorf(askd.ENOTFOUND, "ask %d not found", id)
	}
	return a, nil
}

// visible reports whether c may see a: people see every ask; an agent only
// those of its own session, which is its token's (SPEC §1) — a session name
// alone, sent with another token, is another session.
func visible(c askd.Caller, a *askd.Ask) bool {
	return c.Role == askd.RoleHuman || c.Role == askd.RoleAgent && a.Agent == c.Name && a.Session == c.Session
}

// sessionFilter selects the asks of the caller's session.
func sessionFilter(c askd.Caller) askd.AskFilter {
	return askd.AskFilter{Agent: c.Name, Session: c.Session}
}

// History returns the transitions of one ask, oldest first (humans only).
func (s *Service) History(ctx context.Context, c askd.Caller, id int64) ([]*askd.Event, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	var evs []*askd.Event
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		evs, err = tx.AskHistory(ctx, id)
		return err
	})
	return evs, err
}

// Purge deletes settled asks older than Retain, with their history.
func (s *Service) Purge(ctx context.Context) (int, error) {
	if s.cfg.Retain <= 0 {
		return 0, nil
	}
	var n int
	err := s.store.Update(ctx, func(tx askd.Tx) (err error) {
		n, err = tx.DeleteAsks(ctx, s.now().Add(-s.cfg.Retain))
		return err
	})
	return n, err
}

// Check returns an agent's ask as it is now. The first check of a settled ask
// records that the agent was told; later checks return the same outcome.
func (s *Service) Check(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	a, err := s.Get(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return s.recordTold(ctx, c, a)
}

// recordTold is Check of an ask the caller has just read (through Get, poll
// or Wait): the agent is being given a's outcome. It reads again only to
// record that the agent was told (markTold and the told event), the first
// time.
func (s *Service) recordTold(ctx context.Context, c askd.Caller, a *askd.Ask) (*askd.Ask, error) {
	if a.Pending() || a.ToldAt != nil {
		return a, nil
	}
	id := a.ID
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		out = a
		return s.toldOnce(ctx, tx, a, c.Name, "checked")
	})
	return out, err
}

// toldOnce marks a told, with a told event by actor saying how (note),
// unless it was told already.
func (s *Service) toldOnce(ctx context.Context, tx askd.Tx, a *askd.Ask, actor, note string) error {
	if a.ToldAt != nil {
		return nil
	}
	if err := s.markTold(ctx, tx, a); err != nil {
		return err
	}
	return s.record(ctx, tx, a, askd.ActionTold, actor, note)
}

// markTold stores that the agent has learnt a's outcome (ToldAt), and marks
// its pending tell delivery, if any, sent (whoever tells first, nothing tells
// again). The told event is the caller's to record: some add events last.
func (s *Service) markTold(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
	now := s.now()
	a.ToldAt = &now
	a.UpdatedAt = now
	if err := tx.UpdateAsk(ctx, a); err != nil {
		return err
	}
	if !a.ToBeTold || a.SettledAt == nil {
		return nil
	}
	d, err := tx.Delivery(ctx, askd.TellKey(a))
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return nil // settled before deliveries existed
	}
	if err != nil || d.Status != askd.DeliveryPending {
		return err
	}
	d.Status, d.NextAt, d.ClaimedUntil, d.LastError, d.UpdatedAt = askd.DeliverySent, nil, nil, "", now
	return tx.UpdateDelivery(ctx, d)
}

// Open returns the calling agent's session's pending asks, so an agent whose
// blocking call was cut off can find its ask again.
func (s *Service) Open(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	var asks []*askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		f := sessionFilter(c)
		f.Status = askd.StatusPending
		asks, err = tx.FindAsks(ctx, f)
		return err
	})
	return asks, err
}

// CheckAll is check_ask {} (and an agent's GET /api/asks): the calling
// session's pending asks, then the settled ones it is to be told of and has
// not been, with their outcomes, which this marks told (the agent is given
// them now), so an agent whose blocking call was cut off always finds its ask
// and its answer again (SPEC §2.4).
func (s *Service) CheckAll(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	pending, err := s.Open(ctx, c)
	if err != nil {
		return nil, err
	}
	told, err := s.takeToBeTold(ctx, c, "checked")
	return append(pending, told...), err
}

// takeToBeTold returns the session's settled asks that are to be told and
// have not been, oldest settled first, and marks them told (how: by what,
// for their told events): the caller gives them to the agent now. A tell a
// channel bridge holds the lease of is left to it.
func (s *Service) takeToBeTold(ctx context.Context, c askd.Caller, how string) ([]*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens are told of their asks")
	}
	var out []*askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.LockSession(ctx, c.Name, c.Session); err != nil {
			return err
		}
		asks, err := tx.FindAsks(ctx, sessionFilter(c))
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
			if err := s.markTold(ctx, tx, a); err != nil {
				return err
			}
			out = append(out, a)
		}
		slices.SortFunc(out, func(a, b *askd.Ask) int { return a.SettledAt.Compare(*b.SettledAt) })
		// Events last: on PostgreSQL the event log's lock is held to commit.
		for _, a := range out {
			if err := s.record(ctx, tx, a, askd.ActionTold, c.Name, how); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// pendingToBeTold returns the session's pending asks whose outcome is to be
// told to the agent (what a Stop hook with ?wait= waits for).
func (s *Service) pendingToBeTold(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	pending, err := s.Open(ctx, c)
	return slices.DeleteFunc(pending, func(a *askd.Ask) bool { return !a.ToBeTold }), err
}

// List returns asks for the inbox: pending ones first, then settled ones.
func (s *Service) List(ctx context.Context, c askd.Caller, f askd.AskFilter) ([]*askd.Ask, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	if f.Status == "" || f.Status == askd.StatusPending {
		s.settleOverdue(ctx)
	}
	var asks []*askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) error {
		if f.Status != "" {
			var err error
			asks, err = tx.FindAsks(ctx, f)
			return err
		}
		// Default: every pending ask, then the last Limit (50) settled ones.
		pf := f
		pf.Status, pf.Limit = askd.StatusPending, 0
		pending, err := tx.FindAsks(ctx, pf)
		if err != nil {
			return err
		}
		limit := f.Limit
		if limit <= 0 {
			limit = 50
		}
		var settled []*askd.Ask
		for _, st := range []askd.Status{askd.StatusAnswered, askd.StatusCancelled} {
			sf := f
			sf.Status, sf.Limit = st, limit
			more, err := tx.FindAsks(ctx, sf)
			if err != nil {
				return err
			}
			settled = append(settled, more...)
		}
		slices.SortFunc(settled, func(a, b *askd.Ask) int { return b.SettledAt.Compare(*a.SettledAt) })
		if len(settled) > limit {
			settled = settled[:limit]
		}
		asks = append(pending, settled...)
		return nil
	})
	return asks, err
}

// Sessions lists sessions with their pending counts (humans only).
func (s *Service) Sessions(ctx context.Context, c askd.Caller) ([]*askd.SessionInfo, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	var out []*askd.SessionInfo
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Sessions(ctx, askd.SessionQuery{})
		return err
	})
	return out, err
}
