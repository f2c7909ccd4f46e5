package app

import (
	"context"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// # Channel bridges
//
// An askd mcp --channel bridge is Claude Code's channel (docs/clients.md):
// it attaches to its session (Attach) and pushes every told text of it into
// the running session as a channel notification. The rules:
//
//   - Attaching records a lease on the session (BridgeLease, renewed while
//     attached). While one is live, a tell is written for the bridge
//     (channel type bridge) whatever the session's own channel; with none,
//     the session's channel as before. Either way a tell that waits for the
//     agent (hook or bridge) is the bridge's to take: an attached bridge
//     claims it (ClaimSessionTells) with a short lease (TellLease), writes
//     it to Claude Code, and reports it told (ChannelTold), which marks the
//     ask told, by channel.
//   - The Stop hook and check_ask {} pass over a tell a bridge holds the
//     lease of, and a bridge never gets a tell they took first: claims and
//     their telling take turns (askd.Store.Update), each reading what the
//     other wrote. So a told text goes out once. A bridge that dies before
//     writing leaves its lease to run out: the tell goes to the next
//     bridge, or the Stop hook. The one window left is a bridge that wrote
//     the text and died before its report reached askd: then it is told
//     again when its lease ends.
//   - check_ask {id} gives the outcome whenever it is asked (SPEC §2.4), a
//     leased tell's too.
//   - Bridges see the session's settlements through the event feed, which
//     every process reads from the store: an answer given on an inbox
//     process reaches a bridge attached to an agent process.

// Leases of channel bridges.
const (
	// BridgeLease is how long an attachment counts as live without being
	// renewed; an attached bridge renews it every BridgeRenew.
	BridgeLease = 30 * time.Second
	BridgeRenew = 10 * time.Second
	// TellLease is how long a told text claimed by a bridge is its alone:
	// far past what writing it to Claude Code and reporting it takes, and
	// short, since until it ends a dead bridge's claim keeps it from the
	// Stop hook.
	TellLease = 15 * time.Second
)

// maxClaim bounds the told texts one claim takes.
const maxClaim = 20

// Attachment is a channel bridge attached to its session (Service.Attach):
// Next hands it the session's told texts, Close ends it.
type Attachment struct {
	svc     *Service
	c       askd.Caller
	stream  *Stream
	until   time.Time // the lease recorded
	renewAt time.Time // when to renew it (the wall clock's)
	revoked <-chan struct{}
	release func()
}

// Attach attaches a channel bridge to the caller's session (an agent's own,
// SPEC §1), recording the session if it is new (under the per-token cap on
// new sessions). The attachment follows the event feed from now, so that no
// settlement after it is missed. Errors: EFORBIDDEN for people; EINVALID
// for a bad session name; ELIMIT past the cap.
func (s *Service) Attach(ctx context.Context, c askd.Caller) (*Attachment, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens attach a channel bridge")
	}
	if err := askd.ValidName("session", c.Session); err != nil {
		return nil, err
	}
	stream, err := s.Subscribe(ctx, -1)
	if err != nil {
		return nil, err
	}
	a := &Attachment{svc: s, c: c, stream: stream}
	if err := a.renew(ctx); err != nil {
		stream.Close()
		return nil, err
	}
	a.revoked, a.release = s.Hold(c)
	return a, nil
}

// renew records the attachment's lease from now.
func (a *Attachment) renew(ctx context.Context) error {
	until := a.svc.now().Add(BridgeLease)
	err := a.svc.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Sessions.LockSession(ctx, a.c.Name, a.c.Session); err != nil {
			return err
		}
		if err := a.svc.addSession(ctx, tx, a.c.Name, a.c.Session); err != nil {
			return err
		}
		return tx.Channels.AttachBridge(ctx, a.c.Name, a.c.Session, until)
	})
	if err == nil {
		a.until, a.renewAt = until, time.Now().Add(BridgeRenew)
	}
	return err
}

// Close detaches the bridge: its lease on the session ends (unless another
// bridge's replaced it), and told texts it claimed and did not report go
// to the next bridge, or the Stop hook, once their leases end.
func (a *Attachment) Close(ctx context.Context) {
	a.stream.Close()
	a.release()
	err := a.svc.store.Update(ctx, func(tx askd.Tx) error {
		return tx.Channels.DetachBridge(ctx, a.c.Name, a.c.Session, a.until)
	})
	if err != nil {
		a.svc.cfg.Logger.Warn("detach channel bridge", "session", a.c.Session, "err", err)
	}
}

// Next blocks until told texts of the session are leased to the bridge and
// returns them, oldest first. It returns none when until passes (the caller
// sends a heartbeat), and ctx's error when ctx ends; EUNAVAILABLE when the
// service closes, EUNAUTHORIZED when the token is revoked. The attachment's
// lease is renewed meanwhile.
func (a *Attachment) Next(ctx context.Context, until time.Time) ([]*askd.ChannelTell, error) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		tells, err := a.claim(ctx)
		if err != nil || len(tells) > 0 {
			return tells, err
		}
		for look := false; !look; {
			if !time.Now().Before(until) {
				return nil, nil
			}
			if !time.Now().Before(a.renewAt) {
				if err := a.renew(ctx); err != nil {
					return nil, err
				}
				// A lease of a bridge that died ran out meanwhile, maybe:
				// look again whatever the feed said.
				look = true
				continue
			}
			wake := a.renewAt
			if until.Before(wake) {
				wake = until
			}
			timer.Reset(time.Until(wake))
			select {
			case <-a.stream.Ready:
				evs, err := a.stream.Next(ctx)
				if err != nil {
					return nil, err
				}
				look = a.settledHere(evs)
			case <-timer.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-a.svc.closing:
				return nil, askd.Errorf(askd.EUNAVAILABLE, "server shutting down; attach again once it is back")
			case <-a.revoked:
				return nil, errRevoked()
			}
		}
	}
}

// settledHere reports whether one of evs settled an ask of the bridge's
// session, or the feed lost track (an empty batch after a reset reads
// nothing new, and looking costs one claim).
func (a *Attachment) settledHere(evs []*FeedEvent) bool {
	for _, e := range evs {
		if e.Session == a.c.Session && e.Ask != nil && e.Ask.Agent == a.c.Name && askd.EventType(e.Action) == "ask.settled" {
			return true
		}
	}
	return false
}

// claim leases the session's told texts that wait for the agent.
func (a *Attachment) claim(ctx context.Context) ([]*askd.ChannelTell, error) {
	s, c := a.svc, a.c
	var ds []*askd.Delivery
	err := s.store.Update(ctx, func(tx askd.Tx) (err error) {
		// A claim and a Stop hook's telling never overlap: writers take
		// turns (askd.Store.Update).
		if err := tx.Sessions.LockSession(ctx, c.Name, c.Session); err != nil {
			return err
		}
		ds, err = tx.Deliveries.ClaimSessionTells(ctx, c.Name, c.Session, s.now(), TellLease, maxClaim)
		return err
	})
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	var out []*askd.ChannelTell
	err = s.store.View(ctx, func(tx askd.Tx) error {
		out = out[:0]
		for _, d := range ds {
			ask, err := tx.Asks.Ask(ctx, d.AskID)
			if askd.ErrorCode(err) == askd.ENOTFOUND {
				continue // purged meanwhile, with its delivery
			}
			if err != nil {
				return err
			}
			if ask.ToldAt != nil {
				continue // check_ask {id} gave it since the claim
			}
			out = append(out, &askd.ChannelTell{Key: d.Key, AskID: ask.ID, Kind: ask.Kind, Outcome: ask.ChannelOutcome(), Text: ToldText(ask)})
		}
		return nil
	})
	return out, err
}

// ChannelTold records that a channel bridge gave the told text key (a
// ChannelTell's) to its Claude Code session: the ask is marked told, by
// channel, unless it was told already (then nothing changes). Errors:
// ENOTFOUND for a key that is not a tell of the caller's own session.
func (s *Service) ChannelTold(ctx context.Context, c askd.Caller, key string) (*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens report told texts")
	}
	var id int64
	var rest string
	notFound := askd.Errorf(askd.ENOTFOUND, "key: no told text %q in session %q", clip(key, 80), c.Session)
	if n, _ := fmt.Sscanf(key, "ask:%d@%s", &id, &rest); n != 2 {
		return nil, notFound
	}
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id) // the ask first: see ClaimDeliveries
		if askd.ErrorCode(err) == askd.ENOTFOUND || err == nil && !visible(c, a) {
			return notFound
		}
		if err != nil {
			return err
		}
		d, err := tx.Deliveries.Delivery(ctx, key)
		if askd.ErrorCode(err) == askd.ENOTFOUND || err == nil && (d.Kind != askd.DeliveryTell || d.AskID != a.ID) {
			return notFound
		}
		if err != nil {
			return err
		}
		out = a
		_, err = s.markTold(ctx, tx, a, c.Name, "by channel")
		return err
	})
	return out, err
}

// heldByBridge reports whether a bridge holds the lease of a's tell at now
// (it is writing it to Claude Code): the Stop hook and check_ask {} leave it
// to the bridge.
func heldByBridge(ctx context.Context, tx askd.Tx, a *askd.Ask, now time.Time) (bool, error) {
	d, err := tx.Deliveries.Delivery(ctx, askd.TellKey(a))
	if askd.ErrorCode(err) == askd.ENOTFOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return d.Status == askd.DeliveryPending && d.NextAt == nil && d.ClaimedUntil != nil && d.ClaimedUntil.After(now), nil
}

// tellChannel is the channel a tell of agent's session is written for at
// now: a bridge's when one is attached, else the session's own, else nil
// (the server's default). One read, on every settlement that tells.
func tellChannel(ctx context.Context, tx askd.Tx, agent, session string, now time.Time) (*askd.Channel, error) {
	ch, until, err := tx.Channels.TellChannel(ctx, agent, session)
	if err != nil {
		return nil, err
	}
	if until.After(now) {
		return &askd.Channel{Type: askd.ChannelBridge}, nil
	}
	return ch, nil
}
