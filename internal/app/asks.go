package app

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/askd-dev/askd"
)

// Get returns one ask. Agents see only their session's asks (their own
// token's, in the session they name), and their token's keyed approvals
// from any session: any other id is ENOTFOUND, as is an id that does not
// exist.
func (s *Service) Get(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	var a *askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		a, err = tx.Asks.Ask(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !readable(c, a) {
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

// readable reports whether c may read a and wait on it: what is visible to
// c, and an approval keyed by c's token from any of its sessions (SPEC §12:
// a keyed ask belongs to the token). Telling stays with the session that
// made it: what marks an ask to be told, or cuts it off, asks visible.
func readable(c askd.Caller, a *askd.Ask) bool {
	return visible(c, a) || c.Role == askd.RoleAgent && a.Agent == c.Name && a.Keyed()
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
		evs, err = tx.Events.AskHistory(ctx, id)
		return err
	})
	return evs, err
}

// purgeBatch is how many asks one transaction of a purge removes: about
// 20 history rows, so that an answer waiting behind a batch waits about
// as long as behind any other write. Measured against 50 (300,000 asks, SQLite):
// the answers' p90 during the purge 2.3-2.8 ms instead of 5.5-7.0, p99 7
// instead of 10-11.5, the purge 1.7 times as long; 5 was no better.
const purgeBatch = 10

// Purge deletes settled asks older than Retain, with their history, whose
// rows stay in the audit chain purged (askd.AsksTx.DeleteAsks), and returns
// how many went. It removes purgeBatch asks per transaction, oldest
// first, each yielding to every other write (askd.Yielding): an answer
// that comes while one runs goes next, before the purge's next batch, and
// waits for one batch at most. After each batch the writer idles as long
// as the batch held it: a purge of a million rows takes the writer half
// the time at most, never for the whole purge, while agents ask and
// people answer. A batch stands
// on its own: stopped between two (ctx, a crash), what went is purged in
// full, recorded and verifiable, and the next purge removes the rest. The
// retention it purges with is recorded in the chain, in each batch, when
// it is not the one last recorded (a first purge, --retain changed, or
// another process with another --retain recorded its own meanwhile):
// verify holds each purge to it.
func (s *Service) Purge(ctx context.Context) (int, error) {
	if s.cfg.Retain <= 0 {
		return 0, nil
	}
	// To the microsecond, as the stores keep times: the cut-off is then
	// exactly the record's time less the retention.
	now := s.now().UTC().Truncate(time.Microsecond)
	p := askd.Purge{SettledBefore: now.Add(-s.cfg.Retain), At: now, Retain: s.cfg.Retain}
	total := 0
	for {
		var n int
		start := time.Now()
		err := s.store.Update(askd.Yielding(ctx), func(tx askd.Tx) (err error) {
			if err := recordRetain(ctx, tx, p); err != nil {
				return err
			}
			n, err = tx.Asks.DeleteAsks(ctx, p, purgeBatch)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
		// Real time, not the injected clock: this paces the writer.
		pause := time.NewTimer(time.Since(start))
		select {
		case <-ctx.Done():
			pause.Stop()
			return total, ctx.Err()
		case <-pause.C:
		}
	}
}

// recordRetain records p's retention in the audit chain unless it is the
// one last recorded: once, of processes purging at once, since writers take
// turns (askd.Store.Update).
func recordRetain(ctx context.Context, tx askd.Tx, p askd.Purge) error {
	note := askd.RetainNote{Retain: p.Retain.String()}
	last, err := tx.Audit.LastConfigEvent(ctx, askd.ConfigRetain)
	switch {
	case askd.ErrorCode(err) == askd.ENOTFOUND:
	case err != nil:
		return err
	default:
		var was askd.RetainNote
		if json.Unmarshal([]byte(last.Note), &was) == nil && was == note {
			return nil
		}
	}
	b, err := json.Marshal(note)
	if err != nil {
		return err
	}
	return tx.Audit.AddConfigEvent(ctx, &askd.Event{Action: askd.ConfigRetain, Actor: "askd", At: p.At, Note: string(b)})
}

// Open returns the calling agent's session's pending asks, so an agent whose
// blocking call was cut off can find its ask again.
func (s *Service) Open(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	var asks []*askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		f := sessionFilter(c)
		f.Status = askd.StatusPending
		asks, err = tx.Asks.FindAsks(ctx, f)
		return err
	})
	return asks, err
}

// List returns asks for the inbox: pending ones first, then settled ones;
// with mine, only those routed to c, a team of c's, or nobody (SPEC §10).
func (s *Service) List(ctx context.Context, c askd.Caller, f askd.AskFilter, mine bool) ([]*askd.Ask, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	if f.Status == "" || f.Status == askd.StatusPending {
		s.expireBeforeListing(ctx)
	}
	var asks []*askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) error {
		if mine {
			var err error
			if f.Routes, err = routes(ctx, tx, c); err != nil {
				return err
			}
		}
		if f.Status != "" {
			var err error
			asks, err = tx.Asks.FindAsks(ctx, f)
			return err
		}
		// Default: every pending ask, then the last Limit (50) settled ones.
		pf := f
		pf.Status, pf.Limit = askd.StatusPending, 0
		pending, err := tx.Asks.FindAsks(ctx, pf)
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
			more, err := tx.Asks.FindAsks(ctx, sf)
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

// Sessions lists sessions with their pending counts (humans only); with
// mine, the sessions with asks routed to c, a team of c's, or nobody, each
// counting only those asks (SPEC §10).
func (s *Service) Sessions(ctx context.Context, c askd.Caller, mine bool) ([]*askd.SessionInfo, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	var out []*askd.SessionInfo
	err := s.store.View(ctx, func(tx askd.Tx) error {
		var q askd.SessionQuery
		if mine {
			var err error
			if q.Routes, err = routes(ctx, tx, c); err != nil {
				return err
			}
		}
		var err error
		out, err = tx.Sessions.Sessions(ctx, q)
		return err
	})
	return out, err
}
