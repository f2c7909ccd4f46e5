package app

import (
	"context"
	"fmt"

	"github.com/askd-dev/askd"
)

// # Escalation (SPEC §10)
//
// A team's escalate_after and escalate_to: an ask routed to the team that
// is still pending, unclaimed and not snoozed that long after it was made
// (or last changed: revised, released, snoozed) is escalated to
// escalate_to once. It is stored state, not a timer in memory: each second
// every process looks for asks due (askd.AskFilter.EscalateDue, Run), and
// escalates each in a transaction of its own that reads the ask again and
// checks it is still due; writers take turns (askd.Store.Update), so that
// of several processes (on one PostgreSQL) and across restarts exactly one
// escalates it: the escalated row, escalated_to and escalated_at, and its
// target notified.

// escalateBatch is how many due asks one sweep escalates at most; the next
// sweep, a second later, takes the rest.
const escalateBatch = 100

// EscalateDue escalates the asks due, and returns how many it escalated.
func (s *Service) EscalateDue(ctx context.Context) (int, error) {
	now := s.now()
	var due []*askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		due, err = tx.Asks.FindAsks(ctx, askd.AskFilter{EscalateDue: now, Limit: escalateBatch})
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range due {
		ok, err := s.escalate(ctx, d.ID)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	if n > 0 {
		s.kickDeliveries()
	}
	return n, nil
}

// escalate escalates ask id if it is still due, and reports whether it did.
func (s *Service) escalate(ctx context.Context, id int64) (bool, error) {
	var done bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		done = false
		// Once: writers take turns (askd.Store.Update), so another process's escalation is seen.
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		now := s.now()
		team, isTeam := askd.TeamOf(a.Owner)
		if !isTeam || !a.Pending() || a.ClaimedBy != "" || a.EscalatedAt != nil || a.SnoozedUntil != nil && a.SnoozedUntil.After(now) {
			return nil
		}
		t, err := tx.Teams.Team(ctx, team)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			return nil
		}
		if err != nil {
			return err
		}
		if t.EscalateAfter <= 0 || t.EscalateTo == "" || a.UpdatedAt.Add(t.EscalateAfter).After(now) {
			return nil
		}
		a.EscalatedTo, a.EscalatedAt, a.UpdatedAt = t.EscalateTo, &now, now
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		note := fmt.Sprintf("unclaimed for %s: escalated to %s", HumanDuration(t.EscalateAfter), t.EscalateTo)
		if err := s.record(ctx, tx, a, askd.ActionEscalated, "askd", note); err != nil {
			return err
		}
		done = true
		return s.enqueueEscalation(ctx, tx, a)
	})
	return done, err
}
