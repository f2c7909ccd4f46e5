package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/askd-dev/askd"
)

// CreateOptions adjust how one ask is created.
type CreateOptions struct {
	// Timeout overrides the kind's default deadline (question: QuestionTimeout;
	// approval from a permission prompt: ApprovalTimeout; form:
	// ElicitationTimeout; others: none).
	Timeout time.Duration
	// AgentTool and NoEdit are an approval's from a coding-agent CLI's
	// hook (Gate): the tool's name in that CLI, and whether the CLI cannot
	// run an edited call.
	AgentTool string
	NoEdit    bool
}

// Create makes a new ask for an agent, or returns the one it re-attaches to:
// a pending question with identical questions from the same session, an
// approval with the same tool_use_id, the token's approval with the same key
// (SPEC §12: from any of its sessions, whatever its status; with one_call,
// only while it is untold: reattachKeyed), or — for
// attention asks — the session's pending attention ask, replaced by the new
// content (same id, revision + 1). Everything else it looks at is the
// caller's own session (its token's, SPEC §1).
// A new approval that a live rule of that session matches (rules.go) is
// returned answered by the rule, in the same transaction as its creation.
// Errors: EFORBIDDEN for non-agents, EINVALID naming the field, ECONFLICT
// naming the key when a keyed approval was asked with other content, ELIMIT when the
// session already has MaxPending pending asks, the caller's token
// MaxPendingPerToken across its sessions, or when the ask would start a new
// session past MaxNewSessions in the last minute.
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
	a := s.newAsk(c, in, opt)
	var out *askd.Ask
	var replaced []*askd.Ask // pending asks the new one takes the place of
	var created bool
	var rule *askd.Rule // the rule that answered the new ask, if one did
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		out, replaced, created, rule = nil, nil, false, nil
		// One ask per key, question or tool use, and the caps held: writers take turns (askd.Store.Update).
		if err := tx.Sessions.LockSession(ctx, c.Name, c.Session); err != nil {
			return err
		}
		st, err := tx.Sessions.SessionState(ctx, c.Name, c.Session)
		if err != nil {
			return err
		}
		switch {
		case a.Kind == askd.KindQuestion:
			out, err = s.reattachQuestion(ctx, tx, c, a, st.Pending)
		case a.Kind == askd.KindApproval && a.ToolUseID != "":
			var r *askd.Ask
			out, r, err = s.retryApproval(ctx, tx, c, a)
			if r != nil {
				replaced = append(replaced, r)
			}
		case a.Keyed():
			out, err = s.reattachKeyed(ctx, tx, c, a)
			if out == nil && err == nil && in.Replaces != "" {
				replaced, err = s.replaceKeyed(ctx, tx, c, a, in.Replaces)
			}
		case a.Kind.IsAttention():
			out, err = s.replaceAttention(ctx, tx, c, a, st.Pending)
		}
		if err != nil || out != nil {
			return err
		}
		// The asks replaced are pending no longer: each was one of the
		// token's, and those of this session are in st.Pending.
		st.Pending = slices.DeleteFunc(st.Pending, func(x *askd.Ask) bool {
			return slices.ContainsFunc(replaced, func(r *askd.Ask) bool { return r.ID == x.ID })
		})
		st.TokenPending -= len(replaced)
		if err := quorumFor(ctx, tx, a); err != nil {
			return err
		}
		r, err := s.ruleFor(ctx, tx, a)
		if err != nil {
			return err
		}
		if r != nil && r.Effect == askd.EffectAllow && a.ApprovalsNeeded > 0 {
			r = nil // a policy is stronger than an always-allow rule (SPEC §11)
		}
		if err := s.insertAsk(ctx, tx, c, a, st); err != nil {
			return err
		}
		out, created, rule = a, true, r
		if r != nil {
			// Answered at once: no card, so no one is notified of it.
			return s.answerByRule(ctx, tx, a, r)
		}
		return s.enqueueNotify(ctx, tx, a)
	})
	if err != nil {
		return nil, err
	}
	if created {
		s.Metrics.created(out)
	}
	if rule != nil {
		s.Metrics.answeredByRule(out, rule)
	}
	for _, r := range replaced {
		s.Metrics.settled(r)
	}
	if len(s.cfg.Notifiers) > 0 || s.notifyKept.some() {
		s.kickDeliveries() // its notifications: people's own channels, or the server's notifiers
	}
	return out, nil
}

// newAsk is the ask in would create for c, pending from now, with the
// deadline of its kind unless opt sets one.
func (s *Service) newAsk(c askd.Caller, in *askd.AskInput, opt CreateOptions) *askd.Ask {
	now := s.now()
	a := &askd.Ask{
		Kind: in.Kind, Session: c.Session, Agent: c.Name, Status: askd.StatusPending, Revision: 1,
		Questions: in.Questions, Title: in.Title, Details: in.Details, Options: in.Options,
		Recommended: in.Recommended, Payload: compactJSON(in.Payload), ToolName: in.ToolName, ToolUseID: in.ToolUseID,
		Source: in.Source, Schema: in.Schema, URL: in.URL,
		AgentTool: opt.AgentTool, NoEdit: opt.NoEdit,
		Key:       in.Key, // an approval's (SPEC §12); an attention ask's slot is set below
		OneCall:   in.OneCall,
		Owner:     c.Owner, // routed to the agent token's owner (SPEC §10)
		CreatedAt: now, UpdatedAt: now,
		ToBeTold: in.Kind.IsAttention(),
	}
	a.WithKey()
	timeout := opt.Timeout
	if timeout == 0 {
		switch {
		case in.Kind == askd.KindQuestion:
			timeout = s.cfg.QuestionTimeout
		case in.Kind == askd.KindApproval && in.ToolName != "" && in.Key == "" && !askd.GateTool(in.ToolName):
			// A permission prompt's. A keyed approval and a gate's have no
			// deadline of their own: nothing waits on them but a gate, which
			// bounds its own wait (SPEC §12), and a keyed one timed out would
			// answer its key for good.
			timeout = s.cfg.ApprovalTimeout
		case in.Kind == askd.KindForm:
			timeout = s.cfg.ElicitationTimeout
		}
	}
	if timeout > 0 {
		d := now.Add(timeout)
		a.Deadline = &d
	}
	return a
}

// reattachQuestion returns the question ask that question a asks again, nil
// when there is none: a pending one with the same questions (a retry of a
// call that was cut off), or one answered since and not told.
func (s *Service) reattachQuestion(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask, pending []*askd.Ask) (*askd.Ask, error) {
	for _, p := range pending {
		if p.Kind == askd.KindQuestion && sameJSON(p.Questions, a.Questions) {
			return p, nil
		}
	}
	// A call cut off while the person answered: the agent never saw the
	// answer (nothing recorded it told), so asking the same again returns
	// that answer rather than asking the person twice. Only the newest few
	// are looked at: a retry comes soon after.
	rf := sessionFilter(c)
	rf.Kind, rf.Status, rf.Limit = askd.KindQuestion, askd.StatusAnswered, 3
	recent, err := tx.Asks.FindAsks(ctx, rf)
	if err != nil {
		return nil, err
	}
	for _, p := range recent {
		if p.ToldAt == nil && sameJSON(p.Questions, a.Questions) {
			return p, nil
		}
	}
	return nil, nil
}

// reattachKeyed returns the approval c's token asked with a's key (SPEC
// §12), from any of its sessions and whatever its status, nil when the key
// is new. One asked with other content is ECONFLICT naming the key: an old
// yes never approves something new. Two requests of one key at once, from
// any sessions or processes, make one ask: writers take turns
// (askd.Store.Update), so the later finds the earlier's.
//
// A key asked with one_call (SPEC §14: one approval answers one call) is
// the approval's only while it holds it (askd.Ask.HoldsKey): pending, or
// decided and not yet told. Once told — its call was answered — nil: the
// key makes a new approval, and the told one keeps its key in its record
// but holds it no more (the stores' unique index is of the approvals that
// hold their key). Two requests at once after the telling make one new
// approval, for the same reason as above; and a told one is never handed
// out again. A key is asked one way: with one_call or without, else
// ECONFLICT.
func (s *Service) reattachKeyed(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask) (*askd.Ask, error) {
	// The newest first: the one holding the key, if one does (every older one
	// is a one-call approval told).
	prior, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Agent: c.Name, Key: a.Key, Kind: askd.KindApproval, Limit: 1})
	if err != nil || len(prior) == 0 {
		return nil, err
	}
	p := prior[0]
	switch {
	case p.OneCall != a.OneCall:
		how := "without one_call"
		if p.OneCall {
			how = "with one_call"
		}
		return nil, askd.Errorf(askd.ECONFLICT, "key %q: approval %d was asked %s; a key is asked one way, so ask this one with a new key",
			clip(a.Key, 80), p.ID, how)
	case !p.HoldsKey():
		return nil, nil // its call was answered: this is a new call
	case !sameApproval(p, a):
		return nil, askd.Errorf(askd.ECONFLICT,
			"key %q: approval %d (%s) was asked with other content (title, details, payload or tool_name); a key names one request, so ask this one with a new key",
			clip(a.Key, 80), p.ID, p.Status)
	}
	return p, nil
}

// replaceKeyed cancels as replaced c's token's pending keyed approvals whose
// key starts with prefix, other than a's: a newer push of a ref takes the
// place of the older one's pending ask (SPEC §12), so that pushes do not
// pile up. It returns them, settled and recorded.
func (s *Service) replaceKeyed(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask, prefix string) ([]*askd.Ask, error) {
	older, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Agent: c.Name, KeyPrefix: prefix, Kind: askd.KindApproval, Status: askd.StatusPending})
	if err != nil {
		return nil, err
	}
	for _, p := range older {
		p.Settle(askd.StatusCancelled, askd.ReasonReplaced, nil, c.Name, a.CreatedAt)
		if err := tx.Asks.UpdateAsk(ctx, p); err != nil {
			return nil, err
		}
		if err := s.record(ctx, tx, p, askd.ActionReplaced, c.Name, clip("replaced by a newer request: "+a.Key, 200)); err != nil {
			return nil, err
		}
	}
	return older, nil
}

// retryApproval looks for the approval with approval a's tool_use_id. A
// decided one, or a pending one with the same content, is a retried tool
// call: it is returned, to re-attach to. A pending one with new content no
// longer applies: it is cancelled as replaced (stored, not only recorded)
// and returned as replaced, for a to take its place. Both are nil when the
// tool use is new.
func (s *Service) retryApproval(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask) (same, replaced *askd.Ask, err error) {
	tf := sessionFilter(c)
	tf.ToolUseID, tf.Kind, tf.Limit = a.ToolUseID, askd.KindApproval, 1
	prior, err := tx.Asks.FindAsks(ctx, tf)
	if err != nil || len(prior) == 0 {
		return nil, nil, err
	}
	p := prior[0]
	if _, relayed := a.RelayRequestID(); relayed && !p.Pending() {
		// Claude Code's request ids are five letters made from the tool use:
		// two prompts may share one, so a decision is never reused for a
		// relayed prompt (relay.go). Only a pending card is attached to again.
		return nil, nil, nil
	}
	if !p.Pending() || sameApproval(p, a) {
		return p, nil, nil
	}
	p.Settle(askd.StatusCancelled, askd.ReasonReplaced, nil, c.Name, a.CreatedAt)
	if err := tx.Asks.UpdateAsk(ctx, p); err != nil {
		return nil, nil, err
	}
	if err := s.record(ctx, tx, p, askd.ActionReplaced, c.Name, "replaced by a retry with new input"); err != nil {
		return nil, nil, err
	}
	return nil, p, nil
}

// replaceAttention gives the session's pending attention ask, if any,
// attention ask a's content (one attention ask per session: the new one
// takes its place, same id, revision + 1) and returns it; nil when there is
// none.
func (s *Service) replaceAttention(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask, pending []*askd.Ask) (*askd.Ask, error) {
	for _, p := range pending {
		if !p.Kind.IsAttention() {
			continue
		}
		p.Kind, p.Title, p.Details, p.Options, p.Recommended = a.Kind, a.Title, a.Details, a.Options, a.Recommended
		p.Revision++
		p.UpdatedAt = a.CreatedAt
		p.SnoozedUntil = nil // new content deserves a fresh look
		if err := tx.Asks.UpdateAsk(ctx, p); err != nil {
			return nil, err
		}
		if err := s.enqueueNotify(ctx, tx, p); err != nil {
			return nil, err
		}
		return p, s.record(ctx, tx, p, askd.ActionReplaced, c.Name, fmt.Sprintf("revision %d", p.Revision))
	}
	return nil, nil
}

// insertAsk stores the new ask a of c's session, which is as st says,
// within the caps (MaxPending, checkTokenPending, addSession), with its
// created event. Its notify deliveries are the caller's to queue
// (enqueueNotify): an ask a rule answers has none.
func (s *Service) insertAsk(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask, st *askd.SessionState) error {
	if n := len(st.Pending); n >= s.cfg.MaxPending {
		return askd.Errorf(askd.ELIMIT, "session %q already has %d pending asks, at most %d: wait for answers or cancel some with cancel_ask", c.Session, n, s.cfg.MaxPending)
	}
	if err := s.checkTokenPending(c.Name, st.TokenPending); err != nil {
		return err
	}
	if !st.Recorded { // its first ask
		if err := s.addSession(ctx, tx, c.Name, c.Session); err != nil {
			return err
		}
	}
	if err := tx.Asks.CreateAsk(ctx, a); err != nil {
		return err
	}
	return s.record(ctx, tx, a, askd.ActionCreated, c.Name, "")
}

// checkTokenPending refuses a new ask when agent's token already has
// MaxPendingPerToken pending asks across all its sessions, n of them
// (ELIMIT): the per-session cap alone lets one token fill the inbox by
// naming new sessions.
func (s *Service) checkTokenPending(agent string, n int) error {
	if n >= s.cfg.MaxPendingPerToken {
		return askd.Errorf(askd.ELIMIT, "agent token %q already has %d pending asks across its sessions, at most %d (askd serve --max-pending-per-token): wait for answers or cancel some with cancel_ask", agent, n, s.cfg.MaxPendingPerToken)
	}
	return nil
}

// addSession records agent's session if it is new, refusing it (ELIMIT)
// when the token has started MaxNewSessions sessions in the last minute.
// The refusal fails the caller's transaction, which takes the record back.
func (s *Service) addSession(ctx context.Context, tx askd.Tx, agent, session string) error {
	now := s.now()
	added, err := tx.Sessions.AddSession(ctx, agent, session, now)
	if err != nil || !added {
		return err
	}
	n, err := tx.Sessions.CountSessions(ctx, agent, now.Add(-time.Minute))
	if err != nil {
		return err
	}
	if n > s.cfg.MaxNewSessions {
		return askd.Errorf(askd.ELIMIT, "session %q: agent token %q started %d new sessions in the last minute, at most %d (askd serve --max-new-sessions): ask in a session it has, or wait", session, agent, n-1, s.cfg.MaxNewSessions)
	}
	return nil
}

// record appends the history event for a transition of a.
func (s *Service) record(ctx context.Context, tx askd.Tx, a *askd.Ask, action, actor, note string) error {
	return s.recordAt(ctx, tx, a, action, actor, note, a.UpdatedAt)
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
