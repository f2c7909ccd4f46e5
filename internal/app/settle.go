package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askd-dev/askd"
)

func human(c askd.Caller) error {
	if c.Role != askd.RoleHuman {
		return askd.Errorf(askd.EFORBIDDEN, "only people (human tokens) may do this")
	}
	return nil
}

// settle is the one path by which a pending ask becomes answered or cancelled
// by a caller. change edits the ask in the transaction tx (it sees it
// pending, its deadline not passed; it may also check or change what else
// the settlement needs, as an answer link's use) and returns the history
// action and note.
func (s *Service) settle(ctx context.Context, id int64, change settleFunc) (*askd.Ask, error) {
	var out *askd.Ask
	var expired, send bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		// The first answer wins, and an approval counts once: writers take turns (askd.Store.Update).
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		out, send, expired = a, false, false
		now := s.now()
		if overdue(a, now) {
			// Past its deadline: it timed out, whatever the sweeper has done so far.
			send, err = s.expireTx(ctx, tx, a, now)
			expired = err == nil
			return err
		}
		if !a.Pending() {
			return conflict(a)
		}
		action, note, err := change(tx, a)
		if err != nil {
			return err
		}
		if a.Pending() && len(a.Approvals) > 0 {
			// Counted, not settled (quorum.go): the latest approval is the
			// act. The ask keeps its UpdatedAt, the clock its escalation
			// runs on (escalate.go): an approval in part does not put it off.
			if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
				return err
			}
			if err := s.recordAt(ctx, tx, a, action, a.Approvals[len(a.Approvals)-1].By, note, now); err != nil {
				return err
			}
			// The others learn that their approval is needed (notifypeople.go).
			send = true
			return s.enqueueApprovalNotify(ctx, tx, a)
		}
		a.UpdatedAt = now
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		// The answer and its delivery to the agent commit together, or neither.
		if send, err = s.enqueueTell(ctx, tx, a); err != nil {
			return err
		}
		// Those mailed about it learn who settled it (mail.go).
		if mailed, err := s.enqueueSettledMail(ctx, tx, a); err != nil {
			return err
		} else if mailed {
			send = true
		}
		return s.record(ctx, tx, a, action, a.SettledBy, note)
	})
	if send {
		s.kickDeliveries()
	}
	if err == nil && expired {
		s.Metrics.settled(out)
		return nil, conflict(out)
	}
	if err != nil {
		return nil, err
	}
	if !out.Pending() {
		s.Metrics.settled(out)
	}
	return out, nil
}

// settleFunc changes a pending ask a in tx to settle it, or for an
// approval a policy covers to count one approval (a.Approvals grows, or
// starts again), and returns the history action and note (see settle).
type settleFunc func(tx askd.Tx, a *askd.Ask) (action, note string, err error)

// recordAt is record for an event at a time of its own: an approval in
// part, which leaves the ask's UpdatedAt as it was.
func (s *Service) recordAt(ctx context.Context, tx askd.Tx, a *askd.Ask, action, actor, note string, at time.Time) error {
	snap := *a
	return tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: a.Session, Action: action, Actor: actor, At: at, Note: note, Ask: &snap})
}

// conflict is the ECONFLICT error for an ask that is no longer pending, carrying
// its current state.
func conflict(a *askd.Ask) error {
	var how string
	switch {
	case a.Status == askd.StatusAnswered:
		how = "answered by " + a.SettledBy
	case a.CancelReason == askd.ReasonDismissed:
		how = "dismissed by " + a.SettledBy
	case a.CancelReason == askd.ReasonTimeout:
		how = "timed out"
	case a.CancelReason == askd.ReasonWithdrawn:
		how = "withdrawn by the agent"
	default:
		how = string(a.Status) + " (" + string(a.CancelReason) + ")"
	}
	return &askd.Error{Code: askd.ECONFLICT, Message: fmt.Sprintf("ask %d is no longer pending: %s", a.ID, how), Ask: a}
}

// Gate is asked before a person's answer to an ask that will be told is
// accepted (askd serve --before-tell).
type Gate interface {
	// Allow returns ok when the answer may stand; otherwise reason says why
	// not. err means the gate could not be asked: the answer is then refused
	// too (fail closed).
	Allow(ctx context.Context, req *GateRequest) (ok bool, reason string, err error)
}

// GateRequest is what a gate is asked about: who is settling which ask, and
// how.
type GateRequest struct {
	Action string       `json:"action"` // "answer" or "dismiss"
	By     string       `json:"by"`     // the human
	Ask    *askd.Ask    `json:"ask"`    // as it is, still pending
	Answer *askd.Answer `json:"answer"` // the answer, or a dismissal's reply (may be null)
}

// errGate is settle's signal that the ask needs the gate's consent first.
var errGate = errors.New("the before-tell gate must be asked")

// askGate asks the gate about settling ask id; nil when it allows.
func (s *Service) askGate(ctx context.Context, c askd.Caller, id int64, action string, ans *askd.Answer) error {
	a, err := s.Get(ctx, c, id)
	if err != nil {
		return err
	}
	ok, reason, err := s.cfg.BeforeTell.Allow(ctx, &GateRequest{Action: action, By: c.Name, Ask: a, Answer: ans})
	if err != nil {
		s.cfg.Logger.Warn("before-tell gate unreachable", "ask", id, "err", err)
		return askd.Errorf(askd.EFORBIDDEN, "the before-tell gate could not be asked, so the answer was refused (fail closed): %v", err)
	}
	if !ok {
		if reason = strings.TrimSpace(reason); reason == "" {
			reason = "no reason given"
		}
		return askd.Errorf(askd.EFORBIDDEN, "the before-tell gate refused this answer: %s", reason)
	}
	return nil
}

// settleGated is settle for a person's answer or dismissal: when it settles
// an ask that will be told and a gate is configured, the gate is asked first
// (outside any transaction: the change is rolled back, the gate asked, and
// the change made again), then the ask is settled. An approval counted
// toward a quorum (quorum.go) tells nothing, and is not gated; the approval
// that completes the count, or a rejection, is.
func (s *Service) settleGated(ctx context.Context, c askd.Caller, id int64, action string, ans *askd.Answer, change settleFunc) (*askd.Ask, error) {
	gated := false
	for {
		a, err := s.settle(ctx, id, func(tx askd.Tx, a *askd.Ask) (string, string, error) {
			act, note, err := change(tx, a)
			if err == nil && s.cfg.BeforeTell != nil && a.ToBeTold && !a.Pending() && !gated {
				return "", "", errGate
			}
			return act, note, err
		})
		if !errors.Is(err, errGate) || gated {
			return a, err
		}
		if err := s.askGate(ctx, c, id, action, ans); err != nil {
			return nil, err
		}
		gated = true
	}
}

// Answer settles a pending ask with a person's answer. The first answer wins; a
// later one gets ECONFLICT carrying the current state. An answer that does not
// fit the ask is EMISMATCH naming the field.
func (s *Service) Answer(ctx context.Context, c askd.Caller, id int64, ans *askd.Answer) (*askd.Ask, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	return s.settleGated(ctx, c, id, "answer", ans, func(_ askd.Tx, a *askd.Ask) (string, string, error) {
		if err := checkRelayAnswer(a, ans); err != nil {
			return "", "", err
		}
		if err := a.CheckAnswer(ans); err != nil {
			var e *askd.Error
			if errors.As(err, &e) {
				return "", "", &askd.Error{Code: askd.EMISMATCH, Message: e.Message}
			}
			return "", "", err
		}
		ans.Payload = compactJSON(ans.Payload)
		return s.countAnswer(a, c.Name, ans)
	})
}

// Dismiss closes a pending ask without answering it; response, if any, is
// passed to the agent.
func (s *Service) Dismiss(ctx context.Context, c askd.Caller, id int64, response string) (*askd.Ask, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	if err := checkText("response", response); err != nil {
		return nil, err
	}
	var ans *askd.Answer
	if response != "" {
		ans = &askd.Answer{Response: response}
	}
	return s.settleGated(ctx, c, id, "dismiss", ans, func(_ askd.Tx, a *askd.Ask) (string, string, error) {
		a.Settle(askd.StatusCancelled, askd.ReasonDismissed, ans, c.Name, s.now())
		return askd.ActionDismissed, "", nil
	})
}

// Withdraw cancels an agent's own pending ask (reason withdrawn). Another
// session's ask is ENOTFOUND.
func (s *Service) Withdraw(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only the agent that asked may withdraw an ask; people dismiss it")
	}
	if _, err := s.Get(ctx, c, id); err != nil {
		return nil, err
	}
	return s.settle(ctx, id, func(_ askd.Tx, a *askd.Ask) (string, string, error) {
		now := s.now()
		a.Settle(askd.StatusCancelled, askd.ReasonWithdrawn, nil, c.Name, now)
		nothingToTell(a, now) // the agent withdrew it
		return askd.ActionWithdrawn, "", nil
	})
}

// Snooze hides a pending ask from the inbox until the given time. The agent is
// told nothing.
func (s *Service) Snooze(ctx context.Context, c askd.Caller, id int64, until time.Time) (*askd.Ask, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	now := s.now()
	if !until.After(now) {
		return nil, askd.Errorf(askd.EINVALID, "until: %s is not in the future", until.UTC().Format(time.RFC3339))
	}
	if until.After(now.Add(365 * 24 * time.Hour)) {
		return nil, askd.Errorf(askd.EINVALID, "until: more than a year ahead")
	}
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		if !a.Pending() {
			return conflict(a)
		}
		u := until.UTC()
		a.SnoozedUntil = &u
		a.UpdatedAt = now
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		out = a
		return s.record(ctx, tx, a, askd.ActionSnoozed, c.Name, "until "+u.Format(time.RFC3339))
	})
	return out, err
}

func checkText(field, s string) error {
	if n := len([]rune(s)); n > askd.MaxAnswerChars {
		return askd.Errorf(askd.EINVALID, "%s: %d characters, at most %d", field, n, askd.MaxAnswerChars)
	}
	return nil
}
