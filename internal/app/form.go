package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/askd-dev/askd"
)

// # Form asks: an MCP server's elicitation, put to a person (SPEC §9)
//
// Claude Code's Elicitation hook hands askd the question an MCP server asks
// its user; Elicit makes it a form ask in the caller's session, waits for its
// outcome through AwaitOutcome like every blocking call, and says what to
// answer the MCP server:
//
//	the person's answer (content, or Done in url mode) ─▶ accept
//	the person's Decline                                ─▶ decline
//	a dismissal, a timeout, the server stopping          ─▶ cancel
//	a schema askd refuses, a full inbox                  ─▶ decline at once, logged
//
// There is one ask per elicitation: each is a request its MCP server waits
// on by itself, so two alike are not merged (a retry cannot find the first:
// it was withdrawn when its caller went away). The caps on pending asks
// apply as for questions.
//
// A form ask whose waiting caller goes away (Claude Code's hook timeout, a
// dropped connection) or whose server stops is withdrawn rather than cut
// off: nothing could carry a later answer to the MCP server that asked.

// Elicitation is an MCP server's question, as the Elicitation hook gives it.
type Elicitation struct {
	Server  string          // the MCP server's name (mcp_server_name)
	Message string          // what it asks
	Mode    string          // "form" (also when empty) or "url"
	Schema  json.RawMessage // form mode: MCP's restricted form schema
	URL     string          // url mode: where the person is to go
}

// ElicitResult is what the MCP server is answered: Action is accept,
// decline or cancel; Content the person's values (accept in form mode).
type ElicitResult struct {
	Action  string
	Content map[string]any
	Ask     int64 // the form ask; 0 when none was made
}

// Elicit puts e to a person as a form ask of c's session and waits, up to
// the ask's deadline (--elicitation-timeout), for what to answer. A form
// askd refuses (or cannot take now: ELIMIT) is declined at once, the reason
// in the log. When ctx ends, the ask is withdrawn and ctx's error returned.
func (s *Service) Elicit(ctx context.Context, c askd.Caller, e *Elicitation) (ElicitResult, error) {
	in := &askd.AskInput{Kind: askd.KindForm, Title: e.Message, Source: e.Server}
	switch e.Mode {
	case "", "form":
		in.Schema = e.Schema
		if in.Schema == nil {
			in.Schema = json.RawMessage("null") // refused, naming schema
		}
	case "url":
		in.URL = e.URL
	default:
		s.cfg.Logger.Warn("elicitation declined: askd does not know its mode", "server", e.Server, "mode", e.Mode)
		return ElicitResult{Action: askd.FormDecline}, nil
	}
	a, err := s.Create(ctx, c, in, CreateOptions{})
	if code := askd.ErrorCode(err); code == askd.EINVALID || code == askd.ELIMIT {
		s.cfg.Logger.Warn("elicitation declined: askd cannot put it to a person", "server", e.Server, "session", c.Session, "err", askd.ErrorMessage(err))
		return ElicitResult{Action: askd.FormDecline}, nil
	} else if err != nil {
		return ElicitResult{}, err
	}
	settled, err := s.AwaitOutcome(ctx, c, Wait{Ask: a.ID, Mode: AwaitAnswer}, nil)
	var sd *ShutdownError
	if errors.As(err, &sd) {
		// The server stops: no answer can come now, so none ever will.
		if werr := s.cutOff(context.WithoutCancel(ctx), c, a.ID); werr != nil {
			s.cfg.Logger.Warn("withdraw a form ask at shutdown", "id", a.ID, "err", werr)
		}
		return ElicitResult{Action: askd.FormCancel, Ask: a.ID}, nil
	}
	if err != nil {
		return ElicitResult{Ask: a.ID}, err
	}
	return FormOutcome(settled), nil
}

// FormOutcome is what a settled form ask answers its MCP server.
func FormOutcome(a *askd.Ask) ElicitResult {
	out := ElicitResult{Action: askd.FormCancel, Ask: a.ID}
	if a.Status == askd.StatusAnswered && a.Answer != nil {
		out.Action = a.Answer.Action
		if out.Action == askd.FormAccept && a.URL == "" {
			out.Content = a.Answer.Content
			if out.Content == nil { // an empty answer is stored as none
				out.Content = map[string]any{}
			}
		}
	}
	return out
}

// withdrawForm withdraws c's pending form ask a in tx: its waiting caller
// went away, and nothing can carry a later answer to the MCP server. There
// is nothing to tell the agent.
func (s *Service) withdrawForm(ctx context.Context, tx askd.Tx, c askd.Caller, a *askd.Ask) error {
	now := s.now()
	a.Settle(askd.StatusCancelled, askd.ReasonWithdrawn, nil, c.Name, now)
	nothingToTell(a, now)
	if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
		return err
	}
	return s.record(ctx, tx, a, askd.ActionWithdrawn, c.Name, "the agent stopped waiting: no later answer could reach the MCP server that asked")
}
