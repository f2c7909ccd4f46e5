package app

import (
	"context"
	"fmt"

	"github.com/askd-dev/askd"
)

// # Claim: "I'm on it" (SPEC §10)
//
// A claim is advisory: it tells everyone who is looking at an ask, live,
// and it holds off escalation; it does not stop another approver from
// answering (the first answer still wins). Settling ends it (askd.Ask.Settle).
// Of two people claiming at once, one wins; the other is told who
// (ECONFLICT with the ask): writers take turns (askd.Store.Update).

// Claim marks pending ask id as c's: claimed_by and claimed_at, a claimed
// row in its history. The claimer's own claim again changes nothing;
// someone else's is ECONFLICT naming them; a settled ask is ECONFLICT with
// its state; a viewer's claim is EFORBIDDEN.
func (s *Service) Claim(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	return s.claim(ctx, c, id, func(a *askd.Ask) (string, error) {
		switch {
		case a.ClaimedBy == c.Name:
			return "", nil
		case a.ClaimedBy != "":
			return "", &askd.Error{Code: askd.ECONFLICT, Message: fmt.Sprintf("ask %d is claimed by %s", a.ID, a.ClaimedBy), Ask: a}
		}
		now := s.now()
		a.ClaimedBy, a.ClaimedAt = c.Name, &now
		return askd.ActionClaimed, nil
	})
}

// Release lets c's claim of pending ask id go (a released row). An admin
// may release anyone's; an approver only their own (EFORBIDDEN naming the
// claimer). An unclaimed ask changes nothing.
func (s *Service) Release(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	return s.claim(ctx, c, id, func(a *askd.Ask) (string, error) {
		switch {
		case a.ClaimedBy == "":
			return "", nil
		case a.ClaimedBy != c.Name && c.Needs(askd.AccessAdmin) != nil:
			return "", askd.Errorf(askd.EFORBIDDEN, "ask %d is claimed by %s: only they or an admin may release it", a.ID, a.ClaimedBy)
		}
		a.ClaimedBy, a.ClaimedAt = "", nil
		return askd.ActionReleased, nil
	})
}

// claim changes pending ask id's claim with change, which returns the
// history action ("": nothing to change).
func (s *Service) claim(ctx context.Context, c askd.Caller, id int64, change func(*askd.Ask) (string, error)) (*askd.Ask, error) {
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		// One wins: writers take turns (askd.Store.Update), so of two claims at once the later sees the earlier.
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		out = a
		if !a.Pending() || overdue(a, s.now()) {
			return conflict(a)
		}
		action, err := change(a)
		if err != nil || action == "" {
			return err
		}
		a.UpdatedAt = s.now()
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		return s.record(ctx, tx, a, action, c.Name, "")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
