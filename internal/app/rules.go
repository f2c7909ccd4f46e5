package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/askd-dev/askd"
)

// # Rules
//
// A rule (askd.Rule) is a person's standing answer to one session's
// approvals. It is made from an ask the person has seen, which gives its
// agent, session, tool and title; it answers the approvals of that session
// alone (agent token and session name both, SPEC §1) that are created while
// it is live, at once, through Create: the agent gets the answer through the
// normal path and the ask shows settled, never as a card. Making a rule
// answers nothing by itself, not even the ask it is made from: the inbox
// answers that ask and makes the rule as two calls.

// CreateRule makes a rule from the ask in.AskID, for that ask's session
// (humans only; EFORBIDDEN otherwise). The ask must be an approval the rule
// would match: a permission prompt's (tool_name set) for match tool or
// prefix, a request_approval's (no tool) for match title; a prefix must
// start the ask's command or path, which must then hold no shell operator.
// A rule that does not fit is EMISMATCH naming the field and the rule; a
// session with MaxRulesPerSession live rules is ELIMIT.
func (s *Service) CreateRule(ctx context.Context, c askd.Caller, in *askd.RuleInput) (*askd.Rule, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	now := s.now()
	expires, err := in.Validate(now)
	if err != nil {
		return nil, mismatch(err)
	}
	var out *askd.Rule
	err = s.store.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, in.AskID)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			return askd.Errorf(askd.EMISMATCH, "ask_id: no ask %d", in.AskID)
		}
		if err != nil {
			return err
		}
		if err := s.mayRule(ctx, tx, c, a); err != nil {
			return err
		}
		r, err := ruleFrom(a, in)
		if err != nil {
			return err
		}
		r.CreatedBy, r.CreatedAt, r.ExpiresAt = c.Name, now, expires
		live, err := tx.Rules.FindRules(ctx, askd.RuleFilter{Agent: a.Agent, Session: a.Session, LiveAt: now})
		if err != nil {
			return err
		}
		if len(live) >= askd.MaxRulesPerSession {
			return askd.Errorf(askd.ELIMIT, "session %q of agent %q already has %d live rules, at most %d: revoke some first", a.Session, a.Agent, len(live), askd.MaxRulesPerSession)
		}
		err = tx.Rules.CreateRule(ctx, r)
		if askd.ErrorCode(err) == askd.ENOTFOUND {
			// Its agent token was revoked since it asked (or the person's own).
			return askd.Errorf(askd.EMISMATCH, "ask_id: ask %d's agent token %q no longer exists", a.ID, a.Agent)
		}
		if err != nil {
			return err
		}
		out = r
		return recordConfig(ctx, tx, c, askd.ConfigRuleCreated, map[string]any{"rule": r.ID, "ask": a.ID, "agent": r.Agent, "session": r.Session, "effect": r.Effect})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mayRule refuses an approver's rule from an ask routed to someone else
// (SPEC §10: an approver makes rules only from asks routed to them, a team
// of theirs, or nobody; an admin from any).
func (s *Service) mayRule(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask) error {
	if c.Needs(askd.AccessAdmin) == nil {
		return nil
	}
	rs, err := routes(ctx, tx, c)
	if err != nil {
		return err
	}
	if !routedTo(a, rs) {
		return askd.Errorf(askd.EFORBIDDEN, "needs the admin role: ask %d is routed to %s, not to you", a.ID, a.Owner)
	}
	return nil
}

// ruleFrom is the rule in makes from ask a (its id, agent, session, tool,
// title), without its maker and times; EMISMATCH when it does not fit a.
func ruleFrom(a *askd.Ask, in *askd.RuleInput) (*askd.Rule, error) {
	if a.Kind != askd.KindApproval {
		return nil, askd.Errorf(askd.EMISMATCH, "ask_id: ask %d is a %s; rules answer approvals only (permission prompts and request_approval)", a.ID, a.Kind)
	}
	r := &askd.Rule{Agent: a.Agent, Session: a.Session, Match: in.Match, Effect: in.Effect, AskID: a.ID}
	switch in.Match {
	case askd.MatchTitle:
		if a.ToolName != "" {
			return nil, askd.Errorf(askd.EMISMATCH, "match: title rules are for request_approval asks; ask %d is a permission prompt for %s: use match tool or prefix", a.ID, a.ToolName)
		}
		r.Title = a.Title
		return r, nil
	case askd.MatchTool, askd.MatchPrefix:
		if a.ToolName == "" {
			return nil, askd.Errorf(askd.EMISMATCH, "match: ask %d has no tool (it came from request_approval): use match title", a.ID)
		}
		r.Tool = a.ToolName
	}
	if in.Match == askd.MatchPrefix {
		prefix, err := prefixFor(a, in.Prefix)
		if err != nil {
			return nil, err
		}
		r.Prefix = prefix
	}
	if !r.Matches(a) {
		// Every branch above makes a rule its own ask fits; this is the
		// check that keeps it so.
		return nil, askd.Errorf(askd.EMISMATCH, "match: the rule would not answer ask %d itself", a.ID)
	}
	return r, nil
}

// prefixFor checks a prefix rule's prefix against its ask a, a tool call,
// and returns it as the rule keeps it.
func prefixFor(a *askd.Ask, prefix string) (string, error) {
	field := askd.PrefixField(a.ToolName)
	r := &askd.Rule{Agent: a.Agent, Session: a.Session, Tool: a.ToolName, Match: askd.MatchPrefix, Prefix: prefix}
	switch field {
	case "command":
		if op := askd.ShellOperator(prefix); op != "" {
			return "", askd.Errorf(askd.EMISMATCH, "prefix: contains %s; a prefix is one command and its first arguments, with no shell control operator, redirection or substitution", op)
		}
		if !r.Matches(a) {
			cmd, _ := a.InputString(field)
			if op := askd.ShellOperator(cmd); op != "" {
				return "", askd.Errorf(askd.EMISMATCH, "prefix: ask %d's command contains %s, so no prefix rule answers it (such commands always come to the inbox)", a.ID, op)
			}
			return "", askd.Errorf(askd.EMISMATCH, "prefix: %q does not start ask %d's command %q at a word boundary; a rule is made from an ask it answers", prefix, a.ID, clipText(cmd, 80))
		}
		return prefix, nil
	case "file_path":
		clean, ok := askd.CleanPathPrefix(prefix)
		if !ok {
			return "", askd.Errorf(askd.EMISMATCH, "prefix: %q is not an absolute path without \"..\" (such as /srv/app/src)", prefix)
		}
		r.Prefix = clean
		if !r.Matches(a) {
			p, _ := a.InputString(field)
			return "", askd.Errorf(askd.EMISMATCH, "prefix: ask %d's file_path %q is not %q or under it; a rule is made from an ask it answers", a.ID, clipText(p, 120), clean)
		}
		return clean, nil
	}
	return "", askd.Errorf(askd.EMISMATCH, "match: prefix rules are for Bash commands and the file_path of Read, Write, Edit and MultiEdit; ask %d is for %s: use match tool", a.ID, a.ToolName)
}

// clipText is s cut to n characters, with an ellipsis when cut.
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// mismatch turns the EINVALID error of a rule's fields into EMISMATCH: a
// well-formed body whose values break a rule is 422, as an answer that does
// not fit its ask.
func mismatch(err error) error {
	var e *askd.Error
	if errors.As(err, &e) && e.Code == askd.EINVALID {
		return &askd.Error{Code: askd.EMISMATCH, Message: e.Message}
	}
	return err
}

// Rules returns the live rules (not revoked, not expired), oldest first, of
// agent's sessions, of one session of it, or of every agent's sessions of a
// name (a filter left "" matches all). Humans only.
func (s *Service) Rules(ctx context.Context, c askd.Caller, agent, session string) ([]*askd.Rule, error) {
	if err := human(c); err != nil {
		return nil, err
	}
	var out []*askd.Rule
	err := s.store.View(ctx, func(tx askd.Tx) (err error) {
		out, err = tx.Rules.FindRules(ctx, askd.RuleFilter{Agent: agent, Session: session, LiveAt: s.now()})
		return err
	})
	return out, err
}

// ChangeRule sets when live rule id expires (humans only): for a duration
// from now, or at a time, at most MaxRuleLife ahead, shorter or longer than
// it was. ENOTFOUND for no such rule; ECONFLICT for one that expired or was
// revoked (make a new one); EMISMATCH for a life that breaks the rules.
func (s *Service) ChangeRule(ctx context.Context, c askd.Caller, id int64, life askd.RuleLife) (*askd.Rule, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	now := s.now()
	until, err := life.Until(now)
	if err != nil {
		return nil, mismatch(err)
	}
	return s.changeLiveRule(ctx, c, id, now, func(r *askd.Rule) { r.ExpiresAt = until })
}

// RevokeRule ends live rule id now (humans only): it answers nothing more,
// and is no longer listed. ENOTFOUND for no such rule; ECONFLICT for one
// that expired or was revoked already.
func (s *Service) RevokeRule(ctx context.Context, c askd.Caller, id int64) (*askd.Rule, error) {
	if err := c.Needs(askd.AccessApprover); err != nil {
		return nil, err
	}
	now := s.now()
	return s.changeLiveRule(ctx, c, id, now, func(r *askd.Rule) { r.RevokedAt, r.RevokedBy = &now, c.Name })
}

// changeLiveRule applies c's change to rule id, if it is live at now: an
// approver's own rules, or an admin's any. Of two changes at once the later
// sees the earlier (a rule is revoked once): writers take turns
// (askd.Store.Update).
func (s *Service) changeLiveRule(ctx context.Context, c askd.Caller, id int64, now time.Time, change func(r *askd.Rule)) (*askd.Rule, error) {
	var out *askd.Rule
	err := s.store.Update(ctx, func(tx askd.Tx) error {
		r, err := tx.Rules.Rule(ctx, id)
		if err != nil {
			return err
		}
		if r.CreatedBy != c.Name && c.Needs(askd.AccessAdmin) != nil {
			return askd.Errorf(askd.EFORBIDDEN, "needs the admin role: rule %d was made by %s", id, r.CreatedBy)
		}
		switch {
		case r.RevokedAt != nil:
			return askd.Errorf(askd.ECONFLICT, "rule %d was revoked by %s at %s", id, r.RevokedBy, r.RevokedAt.Format(time.RFC3339))
		case !r.Live(now):
			return askd.Errorf(askd.ECONFLICT, "rule %d expired at %s; make a new one from an ask", id, r.ExpiresAt.Format(time.RFC3339))
		}
		change(r)
		out = r
		if err := tx.Rules.UpdateRule(ctx, r); err != nil {
			return err
		}
		action, fields := askd.ConfigRuleChanged, map[string]any{"rule": r.ID, "expires_at": r.ExpiresAt}
		if r.RevokedAt != nil {
			action, fields = askd.ConfigRuleRevoked, map[string]any{"rule": r.ID}
		}
		return recordConfig(ctx, tx, c, action, fields)
	})
	return out, err
}

// ruleFor returns the live rule that answers new approval a, nil when none
// does. A deny rule comes before an allow rule that also matches; among
// rules of one effect, the oldest.
func (s *Service) ruleFor(ctx context.Context, tx askd.Tx, a *askd.Ask) (*askd.Rule, error) {
	if a.Kind != askd.KindApproval {
		return nil, nil
	}
	rules, err := tx.Rules.FindRules(ctx, askd.RuleFilter{Agent: a.Agent, Session: a.Session, LiveAt: a.CreatedAt})
	if err != nil {
		return nil, err
	}
	rules = slices.DeleteFunc(rules, func(r *askd.Rule) bool { return !r.Matches(a) })
	if len(rules) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(rules, func(x, y *askd.Rule) int {
		if x.Effect != y.Effect {
			if x.Effect == askd.EffectDeny {
				return -1
			}
			return 1
		}
		return 0
	})
	return rules[0], nil
}

// answerByRule settles new approval a, stored already, as rule r answers it,
// in tx: approved, or rejected with the rule named in the comment; settled
// by "rule N", with an answered event whose note names the rule and its
// maker.
func (s *Service) answerByRule(ctx context.Context, tx askd.Tx, a *askd.Ask, r *askd.Rule) error {
	ans := &askd.Answer{Decision: askd.DecisionApproved, Comment: r.Note()}
	if r.Effect == askd.EffectDeny {
		ans.Decision = askd.DecisionRejected
	}
	a.Settle(askd.StatusAnswered, "", ans, r.Actor(), a.CreatedAt)
	if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
		return fmt.Errorf("answer ask %d by rule %d: %w", a.ID, r.ID, err)
	}
	return s.record(ctx, tx, a, askd.ActionAnswered, r.Actor(), r.Note())
}
