package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/askd-dev/askd"
)

// CreateOptions adjust how one ask is created.
type CreateOptions struct {
	// Timeout overrides the kind's default deadline (question: QuestionTimeout;
	// approval from a permission prompt: ApprovalTimeout; others: none).
	Timeout time.Duration
}

// Create makes a new ask for an agent, or returns the one it re-attaches to:
// a pending question with identical questions from the same session, an
// approval with the same tool_use_id, or — for attention asks — the session's
// pending attention ask, replaced by the new content (same id, revision + 1).
// Errors: EFORBIDDEN for non-agents, EINVALID naming the field, ELIMIT when the
// session already has MaxPending pending asks.
func (s *Service) Create(ctx context.Context, c askd.Caller, in *askd.AskInput, opt CreateOptions) (*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens create asks")
	}
	if err := askd.ValidName("session", c.Session); err != nil {
		return nil, err
	}
	if err := in.Validate(s.cfg.PreviewHTML); err != nil {
		return nil, err
	}
	now := s.now()
	a := &askd.Ask{
		Kind: in.Kind, Session: c.Session, Agent: c.Name, Status: askd.StatusPending, Revision: 1,
		Questions: in.Questions, Title: in.Title, Details: in.Details, Options: in.Options,
		Recommended: in.Recommended, Payload: compactJSON(in.Payload), ToolName: in.ToolName, ToolUseID: in.ToolUseID,
		CreatedAt: now, UpdatedAt: now,
		Tell: in.Kind.IsAttention(),
	}
	timeout := opt.Timeout
	if timeout == 0 {
		switch {
		case in.Kind == askd.KindQuestion:
			timeout = s.cfg.QuestionTimeout
		case in.Kind == askd.KindApproval && in.ToolName != "":
			timeout = s.cfg.ApprovalTimeout
		}
	}
	if timeout > 0 {
		d := now.Add(timeout)
		a.Deadline = &d
	}

	var out *askd.Ask
	var created bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.LockSession(ctx, c.Session); err != nil {
			return err
		}
		created = false
		pending, err := tx.FindAsks(ctx, askd.AskFilter{Session: c.Session, Status: askd.StatusPending})
		if err != nil {
			return err
		}
		switch {
		case a.Kind == askd.KindQuestion:
			for _, p := range pending {
				if p.Kind == askd.KindQuestion && sameJSON(p.Questions, a.Questions) {
					out = p // the same question again: a retry of a call that was cut off
					return nil
				}
			}
			// A call cut off while the person answered: the agent never saw
			// the outcome (nothing recorded it told), so asking the same again
			// returns that answer rather than asking the person twice.
			recent, err := tx.FindAsks(ctx, askd.AskFilter{Session: c.Session, Kind: askd.KindQuestion, Status: askd.StatusAnswered, Limit: 20})
			if err != nil {
				return err
			}
			dismissed, err := tx.FindAsks(ctx, askd.AskFilter{Session: c.Session, Kind: askd.KindQuestion, Status: askd.StatusCancelled, Limit: 20})
			if err != nil {
				return err
			}
			for _, p := range append(recent, dismissed...) {
				if p.ToldAt == nil && (p.Status == askd.StatusAnswered || p.CancelReason == askd.ReasonDismissed) &&
					sameJSON(p.Questions, a.Questions) {
					out = p
					return nil
				}
			}
		case a.Kind == askd.KindApproval && a.ToolUseID != "":
			prior, err := tx.FindAsks(ctx, askd.AskFilter{Session: c.Session, ToolUseID: a.ToolUseID, Kind: askd.KindApproval, Limit: 1})
			if err != nil {
				return err
			}
			if len(prior) > 0 {
				p := prior[0]
				if !p.Pending() || sameApproval(p, a) {
					out = p // a retried tool call: the same ask, decided or not
					return nil
				}
				// Same tool use, new content: the old ask no longer applies.
				p.Settle(askd.StatusCancelled, askd.ReasonReplaced, nil, c.Name, now)
				if err := s.record(ctx, tx, p, askd.ActionReplaced, c.Name, "replaced by a retry with new input"); err != nil {
					return err
				}
				pending = slices.DeleteFunc(pending, func(x *askd.Ask) bool { return x.ID == p.ID })
			}
		case a.Kind.IsAttention():
			for _, p := range pending {
				if p.Kind.IsAttention() {
					// One attention ask per session: the new one takes its place.
					p.Kind, p.Title, p.Details, p.Options, p.Recommended = a.Kind, a.Title, a.Details, a.Options, a.Recommended
					p.Revision++
					p.UpdatedAt = now
					p.Agent = a.Agent
					p.SnoozedUntil = nil // new content deserves a fresh look
					if err := tx.UpdateAsk(ctx, p); err != nil {
						return err
					}
					out = p
					if err := s.enqueueNotify(ctx, tx, p); err != nil {
						return err
					}
					return s.record(ctx, tx, p, askd.ActionReplaced, c.Name, fmt.Sprintf("revision %d", p.Revision))
				}
			}
		}
		if len(pending) >= s.cfg.MaxPending {
			return askd.Errorf(askd.ELIMIT, "session %q already has %d pending asks, at most %d: wait for answers or cancel some with cancel_ask", c.Session, len(pending), s.cfg.MaxPending)
		}
		if err := tx.CreateAsk(ctx, a); err != nil {
			return err
		}
		out, created = a, true
		if err := s.enqueueNotify(ctx, tx, a); err != nil {
			return err
		}
		return s.record(ctx, tx, a, askd.ActionCreated, c.Name, "")
	})
	if err != nil {
		return nil, err
	}
	if created {
		s.Metrics.created(out)
	}
	if len(s.cfg.Notifiers) > 0 {
		s.kickDeliveries()
	}
	return out, nil
}

// record appends the history event for a transition of a.
func (s *Service) record(ctx context.Context, tx askd.Tx, a *askd.Ask, action, actor, note string) error {
	snap := *a
	return tx.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: a.Session, Action: action, Actor: actor, At: a.UpdatedAt, Note: note, Ask: &snap})
}

// Get returns one ask. Agents see only their session's asks: any other id is
// ENOTFOUND, as is an id that does not exist.
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

func visible(c askd.Caller, a *askd.Ask) bool {
	return c.Role == askd.RoleHuman || c.Role == askd.RoleAgent && a.Session == c.Session
}

// History returns the transitions of one ask, oldest first (humans only).
func (s *Service) History(ctx context.Context, c askd.Caller, id int64) ([]*askd.Event, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	var evs []*askd.Event
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		evs, err = tx.Events(ctx, id, 0, 0)
		return err
	})
	return evs, err
}

// Wait blocks until ask id settles, its deadline passes (the ask is then
// cancelled with reason timeout), until passes (the pending ask is returned),
// or ctx ends (ctx.Err()). It is woken by the store's change notifications,
// never by polling. When the service closes, it returns EUNAVAILABLE.
func (s *Service) Wait(ctx context.Context, c askd.Caller, id int64, until time.Time) (*askd.Ask, error) {
	w := s.hub.add(id) // before the first read: a change after it still wakes us
	defer s.hub.remove(w)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		a, err := s.Get(ctx, c, id)
		if err != nil {
			return nil, err
		}
		if !a.Pending() {
			return a, nil
		}
		now := s.now()
		wake := until
		if a.Deadline != nil && (until.IsZero() || a.Deadline.Before(until)) {
			if !a.Deadline.After(now) {
				return s.expire(ctx, id)
			}
			wake = *a.Deadline
		}
		if !wake.IsZero() && !wake.After(now) {
			return a, nil
		}
		if !wake.IsZero() {
			timer.Reset(wake.Sub(now))
		}
		select {
		case <-w.ch:
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.closing:
			return a, askd.Errorf(askd.EUNAVAILABLE, "server shutting down, call check_ask with id %d for the answer", id)
		}
	}
}

// expire cancels ask id with reason timeout if it is pending past its deadline,
// and returns it as it then is.
func (s *Service) expire(ctx context.Context, id int64) (*askd.Ask, error) {
	var out *askd.Ask
	var settled bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		out = a
		now := s.now()
		if !a.Pending() || a.Deadline == nil || a.Deadline.After(now) {
			return nil
		}
		a.Settle(askd.StatusCancelled, askd.ReasonTimeout, nil, "askd", now)
		if err := tx.UpdateAsk(ctx, a); err != nil {
			return err
		}
		if err := s.enqueueTell(ctx, tx, a); err != nil {
			return err
		}
		settled = true
		return s.record(ctx, tx, a, askd.ActionTimedOut, "askd", "no one answered in time")
	})
	if err == nil && settled {
		s.Metrics.settled(out)
		s.kickDeliveries()
	}
	return out, err
}

// ExpireDue cancels every pending ask whose deadline has passed, whether or
// not anyone still waits on it.
func (s *Service) ExpireDue(ctx context.Context) error {
	var due []*askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		due, err = tx.FindAsks(ctx, askd.AskFilter{Status: askd.StatusPending, DeadlineBefore: s.now()})
		return err
	})
	if err != nil {
		return err
	}
	for _, a := range due {
		if _, err := s.expire(ctx, a.ID); err != nil {
			return err
		}
	}
	return nil
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

func human(c askd.Caller) error {
	if c.Role != askd.RoleHuman {
		return askd.Errorf(askd.EFORBIDDEN, "only people (human tokens) may do this")
	}
	return nil
}

// settle is the one path by which a pending ask becomes answered or cancelled
// by a caller. change edits the ask in the transaction (it sees it pending,
// its deadline not passed) and returns the history action and note.
func (s *Service) settle(ctx context.Context, id int64, change func(a *askd.Ask) (action, note string, err error)) (*askd.Ask, error) {
	var out *askd.Ask
	var expired bool
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		out = a
		now := s.now()
		if a.Pending() && a.Deadline != nil && !a.Deadline.After(now) {
			// Past its deadline: it timed out, whatever the sweeper has done so far.
			a.Settle(askd.StatusCancelled, askd.ReasonTimeout, nil, "askd", now)
			if err := tx.UpdateAsk(ctx, a); err != nil {
				return err
			}
			if err := s.enqueueTell(ctx, tx, a); err != nil {
				return err
			}
			expired = true
			return s.record(ctx, tx, a, askd.ActionTimedOut, "askd", "no one answered in time")
		}
		if !a.Pending() {
			return conflict(a)
		}
		action, note, err := change(a)
		if err != nil {
			return err
		}
		a.UpdatedAt = now
		if err := tx.UpdateAsk(ctx, a); err != nil {
			return err
		}
		// The answer and its delivery to the agent commit together, or neither.
		if err := s.enqueueTell(ctx, tx, a); err != nil {
			return err
		}
		return s.record(ctx, tx, a, action, a.SettledBy, note)
	})
	if expired {
		s.Metrics.settled(out)
		s.kickDeliveries()
		return nil, conflict(out)
	}
	if err != nil {
		return nil, err
	}
	if !out.Pending() {
		s.Metrics.settled(out)
		s.kickDeliveries()
	}
	return out, nil
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

// Answer settles a pending ask with a person's answer. The first answer wins; a
// later one gets ECONFLICT carrying the current state. An answer that does not
// fit the ask is EMISMATCH naming the field.
func (s *Service) Answer(ctx context.Context, c askd.Caller, id int64, ans *askd.Answer) (*askd.Ask, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	return s.settleGated(ctx, c, id, "answer", ans, func(a *askd.Ask) (string, string, error) {
		if err := a.Check(ans); err != nil {
			var e *askd.Error
			if errors.As(err, &e) {
				return "", "", &askd.Error{Code: askd.EMISMATCH, Message: e.Message}
			}
			return "", "", err
		}
		ans.Payload = compactJSON(ans.Payload)
		a.Settle(askd.StatusAnswered, "", ans, c.Name, s.now())
		return askd.ActionAnswered, "", nil
	})
}

// Dismiss closes a pending ask without answering it; response, if any, is
// passed to the agent.
func (s *Service) Dismiss(ctx context.Context, c askd.Caller, id int64, response string) (*askd.Ask, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	if err := checkText("response", response); err != nil {
		return nil, err
	}
	var ans *askd.Answer
	if response != "" {
		ans = &askd.Answer{Response: response}
	}
	return s.settleGated(ctx, c, id, "dismiss", ans, func(a *askd.Ask) (string, string, error) {
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
	return s.settle(ctx, id, func(a *askd.Ask) (string, string, error) {
		a.Settle(askd.StatusCancelled, askd.ReasonWithdrawn, nil, c.Name, s.now())
		now := s.now()
		a.ToldAt = &now // the agent withdrew it: there is nothing to tell it
		return askd.ActionWithdrawn, "", nil
	})
}

// Snooze hides a pending ask from the inbox until the given time. The agent is
// told nothing.
func (s *Service) Snooze(ctx context.Context, c askd.Caller, id int64, until time.Time) (*askd.Ask, error) {
	if err := human(c); err != nil {
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
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		if !a.Pending() {
			return conflict(a)
		}
		u := until.UTC()
		a.SnoozedUntil = &u
		a.UpdatedAt = now
		if err := tx.UpdateAsk(ctx, a); err != nil {
			return err
		}
		out = a
		return s.record(ctx, tx, a, askd.ActionSnoozed, c.Name, "until "+u.Format(time.RFC3339))
	})
	return out, err
}

// Check returns an agent's ask as it is now. The first check of a settled ask
// records that the agent was told; later checks return the same outcome.
func (s *Service) Check(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	a, err := s.Get(ctx, c, id)
	if err != nil || a.Pending() || a.ToldAt != nil {
		return a, err
	}
	var out *askd.Ask
	err = s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		out = a
		if a.ToldAt != nil {
			return nil
		}
		return s.markTold(ctx, tx, a, c.Name, "checked")
	})
	return out, err
}

// markTold records that the agent has learnt a's outcome: ToldAt, the told
// event, and its pending tell delivery, if any, marked sent (whoever tells
// first, nothing tells again).
func (s *Service) markTold(ctx context.Context, tx askd.Tx, a *askd.Ask, actor, how string) error {
	if err := s.setTold(ctx, tx, a, how); err != nil {
		return err
	}
	return s.record(ctx, tx, a, askd.ActionTold, actor, how)
}

// setTold is markTold without the event, for callers that add events last.
func (s *Service) setTold(ctx context.Context, tx askd.Tx, a *askd.Ask, how string) error {
	now := s.now()
	a.ToldAt = &now
	a.UpdatedAt = now
	if err := tx.UpdateAsk(ctx, a); err != nil {
		return err
	}
	if !a.Tell || a.SettledAt == nil {
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
		asks, err = tx.FindAsks(ctx, askd.AskFilter{Session: c.Session, Status: askd.StatusPending})
		return err
	})
	return asks, err
}

// Untold returns the session's settled asks the agent must be told of and has
// not been, and marks them told (as the Stop hook delivers them).
func (s *Service) Untold(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	var out []*askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		if err := tx.LockSession(ctx, c.Session); err != nil {
			return err
		}
		asks, err := tx.FindAsks(ctx, askd.AskFilter{Session: c.Session})
		if err != nil {
			return err
		}
		out = out[:0]
		for _, a := range asks {
			if a.Pending() || !a.Tell || a.ToldAt != nil {
				continue
			}
			if err := s.setTold(ctx, tx, a, "stop hook"); err != nil {
				return err
			}
			out = append(out, a)
		}
		slices.SortFunc(out, func(a, b *askd.Ask) int { return a.SettledAt.Compare(*b.SettledAt) })
		// Events last: on PostgreSQL the event log's lock is held to commit.
		for _, a := range out {
			if err := s.record(ctx, tx, a, askd.ActionTold, c.Name, "stop hook"); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// PendingToTell reports whether the session has pending asks whose outcome
// will be told to the agent (what a Stop hook with ?wait= waits for).
func (s *Service) PendingToTell(ctx context.Context, c askd.Caller) ([]*askd.Ask, error) {
	pending, err := s.Open(ctx, c)
	return slices.DeleteFunc(pending, func(a *askd.Ask) bool { return !a.Tell }), err
}

// WaitAny blocks until any of the asks changes, until passes, or ctx ends.
func (s *Service) WaitAny(ctx context.Context, ids []int64, until time.Time) {
	ws := make([]*waiter, len(ids))
	wake := make(chan struct{}, 1)
	for i, id := range ids {
		ws[i] = s.hub.add(id)
	}
	defer func() {
		for _, w := range ws {
			s.hub.remove(w)
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	for _, w := range ws {
		go func(w *waiter) {
			select {
			case <-w.ch:
				signal(wake)
			case <-stop:
			}
		}(w)
	}
	d := time.Until(until)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-ctx.Done():
	case <-s.closing:
	}
}

// MarkTell records that an approval's tool call returned pending, so its
// decision must be told to the agent later. It returns the ask as it is: if a
// decision landed meanwhile, the caller returns that instead.
func (s *Service) MarkTell(ctx context.Context, c askd.Caller, id int64) (*askd.Ask, error) {
	var out *askd.Ask
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Ask(ctx, id)
		if err != nil {
			return err
		}
		if !visible(c, a) {
			return askd.Errorf(askd.ENOTFOUND, "ask %d not found", id)
		}
		out = a
		if !a.Pending() || a.Tell {
			return nil
		}
		a.Tell = true
		return tx.UpdateAsk(ctx, a)
	})
	return out, err
}

// List returns asks for the inbox: pending ones first, then settled ones.
func (s *Service) List(ctx context.Context, c askd.Caller, f askd.AskFilter) ([]*askd.Ask, error) {
	if err := human(c); err != nil {
		return nil, err
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
		out, err = tx.Sessions(ctx)
		return err
	})
	return out, err
}

func checkText(field, s string) error {
	if n := len([]rune(s)); n > askd.MaxAnswerChars {
		return askd.Errorf(askd.EINVALID, "%s: %d characters, at most %d", field, n, askd.MaxAnswerChars)
	}
	return nil
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func sameApproval(a, b *askd.Ask) bool {
	return a.Title == b.Title && a.Details == b.Details && a.ToolName == b.ToolName && bytes.Equal(compactJSON(a.Payload), compactJSON(b.Payload))
}

// compactJSON removes insignificant space so equal payloads compare equal.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// AwaitApproval waits up to grace for a decision on approval id. If none comes,
// the ask stays open, is marked to be told to the agent once decided, and is
// returned pending.
func (s *Service) AwaitApproval(ctx context.Context, c askd.Caller, id int64, grace time.Duration) (*askd.Ask, error) {
	a, err := s.Wait(ctx, c, id, s.now().Add(grace))
	if err != nil || !a.Pending() {
		return a, err
	}
	return s.MarkTell(ctx, c, id)
}
