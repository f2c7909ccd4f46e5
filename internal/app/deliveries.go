package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// Delivery rules (SPEC §5):
//
//   - Settling an ask to be told (Ask.ToBeTold, not yet told) by a person's
//     answer or dismissal, or by its timeout, writes a tell delivery in the
//     same transaction, to the session's channel as it is then (the server's
//     default when the session has none). A hook channel's delivery waits for
//     the agent (Stop hook, check_ask, askd check); the others are sent by a
//     worker (internal/tell).
//   - Whichever way the agent learns the outcome first marks the ask told
//     (ToldAt and a told event) and the delivery sent; nothing tells it twice.
//   - A failed attempt is retried after Backoff, up to TellAttempts attempts
//     (counted when claimed, so a sender that died counts too); then, or at
//     once when a retry cannot succeed (the receiver says the session is
//     gone, HTTP 410; a command channel may not run, see channel.go), the
//     delivery is failed and the ask's history records why. The ask stays
//     untold, so a later check_ask or Stop hook still delivers it.
//   - A new ask (or a new revision of an attention ask) writes one notify
//     delivery per configured notifier, retried the same way; a notifier's
//     failure is logged and never touches the ask.

// enqueueTell writes a's tell delivery, in the transaction that settled it.
// It reports whether the delivery is for the worker to send (hook and bridge
// deliveries wait for the agent's channel bridge or Stop hook instead), so
// that only then is it woken.
func (s *Service) enqueueTell(ctx context.Context, tx askd.Tx, a *askd.Ask) (send bool, err error) {
	if a.Pending() || !a.ToBeTold || a.ToldAt != nil {
		return false, nil
	}
	now := s.now()
	// An attached channel bridge comes first (bridge.go); else the session's
	// channel, else the server's default.
	ch, err := tellChannel(ctx, tx, a.Agent, a.Session, now)
	if err != nil {
		return false, err
	}
	if ch == nil {
		ch = s.defaultChannel()
	}
	d := &askd.Delivery{
		Kind: askd.DeliveryTell, Key: askd.TellKey(a), AskID: a.ID, Session: a.Session,
		Channel: *ch, Status: askd.DeliveryPending, CreatedAt: now, UpdatedAt: now,
	}
	if ch.Type != askd.ChannelHook && ch.Type != askd.ChannelBridge {
		d.NextAt = &now
	}
	// A settlement queued already keeps its delivery (then the worker is
	// woken for nothing).
	if err := tx.Deliveries.AddDelivery(ctx, d); err != nil {
		return false, err
	}
	return d.NextAt != nil, nil
}

func (s *Service) defaultChannel() *askd.Channel {
	if s.cfg.Tell.Type == "" {
		return &askd.Channel{Type: askd.ChannelHook}
	}
	ch := s.cfg.Tell
	return &ch
}

// kickDeliveries wakes this process's worker: a delivery may be due.
func (s *Service) kickDeliveries() { signal(s.deliveryKick) }

// DeliveryWake is signalled when this process wrote a delivery that is due
// now, or lost track of changes; the worker then looks for due deliveries.
func (s *Service) DeliveryWake() <-chan struct{} { return s.deliveryKick }

// SetChannel sets how the caller's session session is told of settled asks
// (agent tokens: a launcher sets it for the session it starts; the session
// is the caller token's, SPEC §1, and is recorded as new if it is, under the
// per-token cap on new sessions). Errors: ELIMIT past that cap; EFORBIDDEN
// for people; EINVALID naming the field, also for a command template the
// server does not define and a webhook URL the guard refuses.
func (s *Service) SetChannel(ctx context.Context, c askd.Caller, session string, ch *askd.Channel) error {
	if c.Role != askd.RoleAgent {
		return askd.Errorf(askd.EFORBIDDEN, "only agent tokens set a session's channel")
	}
	if err := askd.ValidName("session", session); err != nil {
		return err
	}
	if err := ch.Validate(); err != nil {
		return err
	}
	if err := s.checkChannel(ch); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Sessions.LockSession(ctx, c.Name, session); err != nil {
			return err
		}
		if err := s.addSession(ctx, tx, c.Name, session); err != nil {
			return err
		}
		return tx.Channels.SetChannel(ctx, c.Name, session, ch)
	})
}

// SessionChannel returns the channel agent's session is told through: its
// own, or the server's default.
func (s *Service) SessionChannel(ctx context.Context, agent, session string) (*askd.Channel, error) {
	var ch *askd.Channel
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		ch, err = tx.Channels.Channel(ctx, agent, session)
		return err
	})
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return s.defaultChannel(), nil
	}
	return ch, err
}

// Claimed is a delivery leased to this process's worker, with what it is
// about: the ask as it is now, and for tells the text to tell.
type Claimed struct {
	Delivery *askd.Delivery
	Ask      *askd.Ask
	Text     string // tells: ToldText of the ask
}

// ClaimDeliveries leases up to limit due deliveries for lease (see
// askd.DeliveryTx.ClaimDeliveries). A tell whose ask was told meanwhile is marked
// sent and not returned.
//
// Writers take turns (askd.Store.Update), so no two of these transactions
// overlap, nor deadlock. Every transaction touching an ask and its delivery
// still reads the ask first (settle, check, the Stop hook, Delivered,
// DeliveryFailed), so the row locks PostgreSQL takes as well come in one
// order. Claiming locks deliveries only; the asks are read after, outside it.
func (s *Service) ClaimDeliveries(ctx context.Context, lease time.Duration, limit int) ([]*Claimed, error) {
	var ds []*askd.Delivery
	err := s.store.Update(ctx, func(tx askd.Tx) (err error) {
		ds, err = tx.Deliveries.ClaimDeliveries(ctx, s.now(), lease, limit)
		return err
	})
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	out := make([]*Claimed, 0, len(ds))
	err = s.store.View(ctx, func(tx askd.Tx) error {
		out = out[:0]
		for _, d := range ds {
			a, err := tx.Asks.Ask(ctx, d.AskID)
			if askd.ErrorCode(err) == askd.ENOTFOUND {
				continue // purged meanwhile, with its delivery
			}
			if err != nil {
				return err
			}
			cl := &Claimed{Delivery: d, Ask: a}
			if d.Kind == askd.DeliveryTell {
				cl.Text = ToldText(a)
			}
			out = append(out, cl)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sendable := out[:0]
	for _, cl := range out {
		if cl.Delivery.Kind == askd.DeliveryTell && cl.Ask.ToldAt != nil {
			// Told another way since it was written: nothing to send.
			if err := s.Delivered(ctx, cl, "another way"); err != nil {
				return nil, err
			}
			continue
		}
		if IsApprovalNotify(cl.Delivery) && !cl.Ask.Pending() {
			// Decided since: no approval is needed any more.
			if err := s.Delivered(ctx, cl, "nobody: decided first"); err != nil {
				return nil, err
			}
			continue
		}
		sendable = append(sendable, cl)
	}
	return sendable, nil
}

// NextDeliveryAt returns when the next delivery becomes due; zero when none
// will (until something new is written).
func (s *Service) NextDeliveryAt(ctx context.Context) (time.Time, error) {
	var at time.Time
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		at, err = tx.Deliveries.NextDeliveryAt(ctx)
		return err
	})
	return at, err
}

// Delivered records that a claimed delivery was sent: for a tell, the ask is
// marked told (once, whoever told it first). how says by what ("webhook").
func (s *Service) Delivered(ctx context.Context, cl *Claimed, how string) error {
	return s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, cl.Delivery.AskID) // the ask first: see ClaimDeliveries
		if err != nil {
			return err
		}
		d, err := tx.Deliveries.Delivery(ctx, cl.Delivery.Key)
		if err != nil {
			return err
		}
		now := s.now()
		d.Status, d.ClaimedUntil, d.NextAt, d.LastError, d.UpdatedAt = askd.DeliverySent, nil, nil, "", now
		if err := tx.Deliveries.UpdateDelivery(ctx, d); err != nil {
			return err
		}
		if d.Kind != askd.DeliveryTell {
			return nil
		}
		_, err = s.markTold(ctx, tx, a, "askd", "by "+how)
		return err
	})
}

// DeliveryFailed records a failed attempt of a claimed delivery: retried
// after Backoff, or failed for good when permanent or out of attempts; a
// failed tell is recorded in the ask's history with the reason. A delivery
// no longer in this claim (sent, failed, or claimed again by another worker
// after the lease ran out) is left alone: writers take turns
// (askd.Store.Update), so the claim it reads is the latest.
func (s *Service) DeliveryFailed(ctx context.Context, cl *Claimed, reason string, permanent bool) error {
	reason = clip(reason, askd.MaxErrorBytes)
	var failed *askd.Delivery
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		failed = nil
		a, err := tx.Asks.Ask(ctx, cl.Delivery.AskID) // the ask first: see ClaimDeliveries
		if err != nil {
			return err
		}
		d, err := tx.Deliveries.Delivery(ctx, cl.Delivery.Key)
		if err != nil {
			return err
		}
		if d.Status != askd.DeliveryPending || d.Attempts != cl.Delivery.Attempts {
			return nil
		}
		now := s.now()
		d.LastError, d.ClaimedUntil, d.UpdatedAt = reason, nil, now
		if !permanent && d.Attempts < s.cfg.TellAttempts {
			wait := Backoff(d.Attempts, rand.Float64)
			if s.cfg.Backoff != nil {
				wait = s.cfg.Backoff(d.Attempts)
			}
			next := now.Add(wait)
			d.NextAt = &next
			return tx.Deliveries.UpdateDelivery(ctx, d)
		}
		d.Status, d.NextAt = askd.DeliveryFailed, nil
		if err := tx.Deliveries.UpdateDelivery(ctx, d); err != nil {
			return err
		}
		failed = d
		if d.Kind != askd.DeliveryTell {
			return nil
		}
		a.UpdatedAt = now
		why := fmt.Sprintf("gave up after %d attempts by %s: %s", d.Attempts, d.Channel.Type, reason)
		if permanent {
			why = fmt.Sprintf("gave up by %s: %s", d.Channel.Type, reason) // the reason says why at once
		}
		return s.record(ctx, tx, a, askd.ActionTellFail, "askd", why)
	})
	if err == nil && failed != nil {
		s.cfg.Logger.Warn("delivery failed for good", "kind", failed.Kind, "ask", failed.AskID, "channel", failed.Channel.Type, "attempts", failed.Attempts, "err", reason)
	}
	return err
}

// Backoff is how long to wait after failed attempt number attempt (1 for the
// first) before the next: exponential from 2 s, doubling, capped at 10
// minutes, with jitter — a uniform pick in [d/2, d) from rnd's [0, 1) — so
// that many deliveries failing together do not retry together.
func Backoff(attempt int, rnd func() float64) time.Duration {
	const base, ceiling = 2 * time.Second, 10 * time.Minute
	d := ceiling
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 20 { // 2 s << 19 is past the ceiling; beyond, shifts overflow
		d = min(base<<(attempt-1), ceiling)
	}
	r := rnd()
	if r < 0 || r >= 1 {
		r = 0
	}
	return d/2 + time.Duration(float64(d/2)*r)
}

// clip shortens s to at most n bytes, on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
