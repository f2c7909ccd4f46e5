package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// Channel bridges (askd mcp --channel): their leases on sessions, and the
// session tells they claim.

// toBeTold is a's settled copy, to be told, by agent.
func toBeTold(a *askd.Ask, agent string, settledAt time.Time) *askd.Ask {
	a.Agent, a.ToBeTold = agent, true
	return settled(a, "", settledAt)
}

func testClaimSessionTells(t *testing.T, s askd.Store) {
	ctx := t.Context()
	now := at(time.Hour)
	lease := 15 * time.Second
	mine := toBeTold(newAsk(askd.KindDecision, "s1", at(0)), "agent-1", at(time.Second))
	leased := toBeTold(newAsk(askd.KindDecision, "s1", at(0)), "agent-1", at(2*time.Second))
	webhook := toBeTold(newAsk(askd.KindDecision, "s1", at(0)), "agent-1", at(3*time.Second))
	told := toBeTold(newAsk(askd.KindDecision, "s1", at(0)), "agent-1", at(4*time.Second))
	told.ToldAt = ptr(at(5 * time.Second))
	notToTell := settled(newAsk(askd.KindApproval, "s1", at(0)), "", at(6*time.Second))
	pending := newAsk(askd.KindDecision, "s1", at(0))
	pending.ToBeTold = true
	// The same session name under another token is another session (SPEC §1).
	theirs := toBeTold(newAsk(askd.KindDecision, "s1", at(0)), "agent-2", at(time.Second))
	otherSession := toBeTold(newAsk(askd.KindDecision, "s2", at(0)), "agent-1", at(time.Second))
	create(t, s, mine, leased, webhook, told, notToTell, pending, theirs, otherSession)

	bridgeDelivery := func(a *askd.Ask) *askd.Delivery {
		d := newDelivery(a, askd.TellKey(a), nil)
		d.Channel = askd.Channel{Type: askd.ChannelBridge}
		return d
	}
	dMine := newDelivery(mine, askd.TellKey(mine), nil) // a hook delivery: bridges take those too
	dLeased := bridgeDelivery(leased)
	dLeased.ClaimedUntil = ptr(now.Add(time.Second))
	dWebhook := newDelivery(webhook, askd.TellKey(webhook), ptr(now.Add(-time.Minute)))
	dTold := bridgeDelivery(told)
	dNotToTell := bridgeDelivery(notToTell)
	dPending := bridgeDelivery(pending)
	dPending.Key = "pending"
	dTheirs := bridgeDelivery(theirs)
	dOther := bridgeDelivery(otherSession)
	dSent := bridgeDelivery(mine)
	dSent.Key, dSent.Status = "sent", askd.DeliverySent
	update(t, s, func(tx askd.Tx) error {
		for _, d := range []*askd.Delivery{dMine, dLeased, dWebhook, dTold, dNotToTell, dPending, dTheirs, dOther, dSent} {
			if err := tx.Deliveries.CreateDelivery(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	claim := func(agent, session string, now time.Time) []string {
		t.Helper()
		var got []*askd.Delivery
		update(t, s, func(tx askd.Tx) (err error) {
			got, err = tx.Deliveries.ClaimSessionTells(ctx, agent, session, now, lease, 10)
			return err
		})
		keys := make([]string, len(got))
		for i, d := range got {
			keys[i] = d.Key
		}
		return keys
	}

	if got := claim("agent-1", "s1", now); !slices.Equal(got, []string{dMine.Key}) {
		t.Fatalf("claim = %v, want only %s: not the leased, the webhook's, the told, one not to tell, the pending, a sent one, another token's or another session's", got, dMine.Key)
	}
	view(t, s, func(tx askd.Tx) error {
		d, err := tx.Deliveries.Delivery(ctx, dMine.Key)
		if err != nil {
			return err
		}
		want := *dMine
		want.Attempts, want.ClaimedUntil, want.UpdatedAt = 1, ptr(now.Add(lease)), now
		checkDelivery(t, "claimed", d, &want)
		// The worker never claims what a bridge does.
		due, err := tx.Deliveries.NextDeliveryAt(ctx)
		if err != nil {
			return err
		}
		checkTime(t, "next delivery for workers", due, dWebhook.NextAt.Add(0))
		return nil
	})
	if got := claim("agent-1", "s1", now); len(got) != 0 {
		t.Fatalf("claim again while leased = %v, want none", got)
	}
	if got := claim("agent-2", "s1", now); !slices.Equal(got, []string{dTheirs.Key}) {
		t.Fatalf("agent-2's claim of its own s1 = %v, want %s", got, dTheirs.Key)
	}
	// Past the leases, both come back.
	if got := claim("agent-1", "s1", now.Add(time.Minute)); !slices.Equal(got, []string{dMine.Key, dLeased.Key}) {
		t.Fatalf("claim past the leases = %v, want [%s %s]", got, dMine.Key, dLeased.Key)
	}
}

func testConcurrentSessionClaims(t *testing.T, s askd.Store) {
	ctx := t.Context()
	const n, claimers = 30, 6
	var asks []*askd.Ask
	for i := range n {
		asks = append(asks, toBeTold(newAsk(askd.KindDecision, "s1", at(0)), "agent-1", at(time.Duration(i)*time.Millisecond)))
	}
	create(t, s, asks...)
	update(t, s, func(tx askd.Tx) error {
		for _, a := range asks {
			if err := tx.Deliveries.CreateDelivery(ctx, newDelivery(a, askd.TellKey(a), nil)); err != nil {
				return err
			}
		}
		return nil
	})
	now := at(time.Hour)
	claimedOnce(t, s, n, claimers, func(tx askd.Tx) ([]*askd.Delivery, error) {
		return tx.Deliveries.ClaimSessionTells(ctx, "agent-1", "s1", now, time.Minute, 2)
	})
}

func testBridgeLeases(t *testing.T, s askd.Store) {
	ctx := t.Context()
	until := func(agent, session string) time.Time {
		t.Helper()
		var got, both time.Time
		var ch *askd.Channel
		view(t, s, func(tx askd.Tx) (err error) {
			if got, err = tx.Channels.BridgeUntil(ctx, agent, session); err != nil {
				return err
			}
			if ch, both, err = tx.Channels.TellChannel(ctx, agent, session); err != nil {
				return err
			}
			set, err := tx.Channels.Channel(ctx, agent, session)
			if askd.ErrorCode(err) == askd.ENOTFOUND {
				set, err = nil, nil
			}
			if err == nil && (set == nil) != (ch == nil) || set != nil && ch != nil && set.Type != ch.Type {
				t.Errorf("TellChannel of %s/%s gives channel %+v, Channel %+v", agent, session, ch, set)
			}
			return err
		})
		if !both.Equal(got) {
			t.Fatalf("TellChannel of %s/%s gives the lease %v, BridgeUntil %v", agent, session, both, got)
		}
		return got
	}
	if got := until("agent-1", "s1"); !got.IsZero() {
		t.Fatalf("bridge of a session not recorded = %v, want zero", got)
	}
	err := s.Update(ctx, func(tx askd.Tx) error { return tx.Channels.AttachBridge(ctx, "agent-1", "s1", at(time.Minute)) })
	wantCode(t, err, askd.ENOTFOUND)
	update(t, s, func(tx askd.Tx) error {
		for _, k := range []struct{ agent, session string }{{"agent-1", "s1"}, {"agent-2", "s1"}} {
			if _, err := tx.Sessions.AddSession(ctx, k.agent, k.session, at(0)); err != nil {
				return err
			}
		}
		return nil
	})
	if got := until("agent-1", "s1"); !got.IsZero() {
		t.Fatalf("bridge of a session without one = %v, want zero", got)
	}
	first, second := at(time.Minute), at(2*time.Minute)
	steps := []struct {
		name   string
		do     func(tx askd.Tx) error
		want   time.Time
		theirs time.Time // agent-2's s1, untouched throughout
	}{
		{"attach", func(tx askd.Tx) error { return tx.Channels.AttachBridge(ctx, "agent-1", "s1", first) }, first, time.Time{}},
		{"a later lease", func(tx askd.Tx) error { return tx.Channels.AttachBridge(ctx, "agent-1", "s1", second) }, second, time.Time{}},
		{"an earlier lease keeps the later", func(tx askd.Tx) error { return tx.Channels.AttachBridge(ctx, "agent-1", "s1", first) }, second, time.Time{}},
		{"detaching a replaced lease changes nothing", func(tx askd.Tx) error { return tx.Channels.DetachBridge(ctx, "agent-1", "s1", first) }, second, time.Time{}},
		{"another token's session of the name", func(tx askd.Tx) error { return tx.Channels.DetachBridge(ctx, "agent-2", "s1", second) }, second, time.Time{}},
		{"detach", func(tx askd.Tx) error { return tx.Channels.DetachBridge(ctx, "agent-1", "s1", second) }, time.Time{}, time.Time{}},
		{"detach a session not recorded", func(tx askd.Tx) error { return tx.Channels.DetachBridge(ctx, "agent-3", "s1", second) }, time.Time{}, time.Time{}},
	}
	for _, st := range steps {
		update(t, s, st.do)
		if got := until("agent-1", "s1"); !got.Equal(storedOrZero(st.want)) {
			t.Errorf("%s: agent-1's s1 bridge until %v, want %v", st.name, got, st.want)
		}
		if got := until("agent-2", "s1"); !got.Equal(storedOrZero(st.theirs)) {
			t.Errorf("%s: agent-2's s1 bridge until %v, want %v", st.name, got, st.theirs)
		}
	}
	// A lease round-trips in UTC, truncated to the microsecond.
	update(t, s, func(tx askd.Tx) error { return tx.Channels.AttachBridge(ctx, "agent-1", "s1", base) })
	checkTime(t, "bridge until", until("agent-1", "s1"), base)
	// Setting the channel keeps the lease.
	update(t, s, func(tx askd.Tx) error {
		return tx.Channels.SetChannel(ctx, "agent-1", "s1", &askd.Channel{Type: askd.ChannelHook})
	})
	checkTime(t, "bridge until after SetChannel", until("agent-1", "s1"), base)
	// With a channel set, TellChannel gives it beside the lease.
	hook := &askd.Channel{Type: askd.ChannelHook}
	update(t, s, func(tx askd.Tx) error { return tx.Channels.SetChannel(ctx, "agent-2", "s1", hook) })
	view(t, s, func(tx askd.Tx) error {
		ch, end, err := tx.Channels.TellChannel(ctx, "agent-2", "s1")
		if err != nil {
			return err
		}
		want, _ := tx.Channels.BridgeUntil(ctx, "agent-2", "s1")
		if ch == nil || ch.Type != askd.ChannelHook || !end.Equal(want) {
			t.Errorf("TellChannel of agent-2/s1 = %+v, %v; want the hook channel and %v", ch, end, want)
		}
		return nil
	})
}

// storedOrZero is t as a store gives it back; zero stays zero.
func storedOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return stored(t)
}
