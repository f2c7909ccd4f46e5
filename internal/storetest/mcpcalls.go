package storetest

import (
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// testMCPCalls: a kept MCP call round-trips with or without its ask,
// answered or not, is replaced by its key, is deleted by key or by age, and
// goes with its ask; an answered call is no early cancellation.
func testMCPCalls(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := newAsk(askd.KindQuestion, "s1", at(0))
	b := newAsk(askd.KindQuestion, "s1", at(0))
	create(t, s, a, b)
	key := func(req string) askd.MCPCallKey {
		return askd.MCPCallKey{Agent: "agent-1", Session: "s1", MCPSession: "M1", RequestID: req}
	}
	calls := []*askd.MCPCall{
		{MCPCallKey: key("1"), AskID: a.ID, CreatedAt: at(0)},
		{MCPCallKey: key(`"two"`), Cancelled: true, CreatedAt: at(time.Minute)}, // a cancellation first
		{MCPCallKey: key("3"), AskID: b.ID, CreatedAt: at(2 * time.Minute)},
		{MCPCallKey: key("4"), Answered: true, CreatedAt: at(2 * time.Minute)}, // answered at once
	}
	update(t, s, func(tx askd.Tx) error {
		for _, c := range calls {
			if err := tx.MCPCalls.PutMCPCall(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	check := func(what string, want *askd.MCPCall) {
		t.Helper()
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.MCPCalls.MCPCall(ctx, want.MCPCallKey)
			if err != nil {
				t.Errorf("%s: %v", what, err)
				return nil
			}
			if got.MCPCallKey != want.MCPCallKey || got.AskID != want.AskID || got.Cancelled != want.Cancelled || got.Answered != want.Answered {
				t.Errorf("%s: got %+v, want %+v", what, got, want)
			}
			checkTime(t, what+" created_at", got.CreatedAt, stored(want.CreatedAt))
			return nil
		})
	}
	for _, c := range calls {
		check("call "+c.RequestID, c)
	}
	gone := func(what string, k askd.MCPCallKey) {
		t.Helper()
		err := s.View(ctx, func(tx askd.Tx) error { _, err := tx.MCPCalls.MCPCall(ctx, k); return err })
		wantCode(t, err, askd.ENOTFOUND)
	}
	gone("another session's call", askd.MCPCallKey{Agent: "agent-1", Session: "s2", MCPSession: "M1", RequestID: "1"})

	t.Run("count early cancellations", func(t *testing.T) {
		other := &askd.MCPCall{MCPCallKey: askd.MCPCallKey{Agent: "agent-2", Session: "s1", MCPSession: "M1", RequestID: "9"}, Cancelled: true, CreatedAt: at(0)}
		answered := &askd.MCPCall{MCPCallKey: askd.MCPCallKey{Agent: "agent-2", Session: "s1", MCPSession: "M1", RequestID: "10"}, Cancelled: true, Answered: true, CreatedAt: at(0)}
		update(t, s, func(tx askd.Tx) error {
			if err := tx.MCPCalls.PutMCPCall(ctx, answered); err != nil {
				return err
			}
			return tx.MCPCalls.PutMCPCall(ctx, other)
		})
		view(t, s, func(tx askd.Tx) error {
			for agent, want := range map[string]int{"agent-1": 1, "agent-2": 1, "agent-3": 0} {
				n, err := tx.MCPCalls.CountEarlyCancellations(ctx, agent)
				if err != nil {
					return err
				}
				if n != want {
					t.Errorf("CountEarlyCancellations(%q) = %d, want %d (only calls without an ask, not answered)", agent, n, want)
				}
			}
			return nil
		})
		update(t, s, func(tx askd.Tx) error {
			if err := tx.MCPCalls.DeleteMCPCall(ctx, answered.MCPCallKey); err != nil {
				return err
			}
			return tx.MCPCalls.DeleteMCPCall(ctx, other.MCPCallKey)
		})
	})

	// The call records its ask after its cancellation: the key's row is replaced.
	later := &askd.MCPCall{MCPCallKey: key(`"two"`), AskID: b.ID, Cancelled: true, CreatedAt: at(3 * time.Minute)}
	update(t, s, func(tx askd.Tx) error { return tx.MCPCalls.PutMCPCall(ctx, later) })
	check("replaced call", later)

	update(t, s, func(tx askd.Tx) error { return tx.MCPCalls.DeleteMCPCall(ctx, key("1")) })
	gone("deleted call", key("1"))
	update(t, s, func(tx askd.Tx) error { return tx.MCPCalls.DeleteMCPCall(ctx, key("1")) }) // none kept: no error
	// By age: created strictly before the time.
	update(t, s, func(tx askd.Tx) error {
		n, err := tx.MCPCalls.PurgeMCPCalls(ctx, at(2*time.Minute))
		if err == nil && n != 0 {
			t.Errorf("purge by age: %d deleted, want 0", n)
		}
		return err
	})
	check("call 3 after purge", calls[2])
	// Calls go with their ask.
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Asks.UpdateAsk(ctx, settled(b, "", at(time.Hour))); err != nil {
			return err
		}
		_, err := tx.Asks.DeleteAsks(ctx, purgeBefore(at(2*time.Hour)), 1000)
		return err
	})
	gone("call of a deleted ask", key("3"))
	gone("replaced call of a deleted ask", key(`"two"`))
}
