package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/askd-dev/askd"
)

// # Permission prompts relayed from a Claude Code channel
//
// With the permission capability, Claude Code sends the channel (askd mcp
// --channel) each tool-permission prompt while it shows the same prompt in
// the terminal; whichever answer comes first wins, and Claude Code does not
// say when the terminal's did. The rules:
//
//   - Each relayed prompt becomes an approval (RelayPermission): the tool,
//     Claude Code's description, and the input preview, as the payload when
//     it is a whole JSON object (then rules that look at the command or path
//     can answer it) or in the details when Claude Code cut it. Its deadline
//     is the approval timeout, as for any permission prompt. Its tool_use_id
//     is "channel:" and the request id, so the same prompt relayed again
//     attaches to the same card. Live rules of the session answer it at once.
//   - Claude Code takes allow or deny back, never an edited input: the card
//     offers no edit, and an answer "modified" is refused (Answer). Only a
//     decision goes back: a timeout or a person closing the card sends
//     nothing, and the terminal's prompt stays.
//   - A policy's quorum (quorum.go) binds the inbox's answers only: the
//     terminal's prompt stays open beside the card, and whoever sits at the
//     terminal can allow the tool call alone. askd cannot hold that answer
//     back (Claude Code acts on it before askd hears anything), so the
//     card of a covered prompt closed as answered in the terminal says it
//     was answered outside the quorum, with the count it had
//     (docs/security.md). askd install claude --channel therefore writes a
//     PermissionRequest hook that takes the covered prompts first, which
//     Claude Code waits on (httpapi's OnlyPolicies, PolicyCovers).
//   - A prompt answered without the inbox closes its card (CloseRelay):
//     cancelled, reason withdrawn, with the reason in the answer's response
//     ("answered in the terminal"), which the inbox shows. The bridge closes
//     a card when a newer prompt arrives (Claude Code prompts for one tool
//     call at a time) and when it exits; the session's Stop hook closes every
//     open one (the turn is over, so its prompts were answered).

// Why a relayed prompt's card closed without a decision in the inbox.
const (
	RelayAnsweredInTerminal = "terminal" // answered in the terminal, or a newer prompt came
	RelaySessionEnded       = "ended"    // the bridge, and so the Claude Code session, ended
)

// relayClosedText is what the closed card says, by reason.
var relayClosedText = map[string]string{
	RelayAnsweredInTerminal: "answered in the terminal",
	RelaySessionEnded:       "the Claude Code session ended before anyone answered here",
}

// RelayPermission makes, or finds again, the card of a prompt relayed by
// the caller's channel bridge (see above), and returns it: pending, or
// answered already by a rule or an earlier answer. Errors: EINVALID naming
// the field; those of Create.
func (s *Service) RelayPermission(ctx context.Context, c askd.Caller, in *askd.PermissionRelay) (*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens relay permission prompts")
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return s.Create(ctx, c, relayAsk(in), CreateOptions{})
}

// relayAsk is the approval a relayed prompt becomes.
func relayAsk(in *askd.PermissionRelay) *askd.AskInput {
	ai := &askd.AskInput{
		Kind: askd.KindApproval, ToolName: in.ToolName,
		ToolUseID: askd.RelayToolUsePrefix + in.RequestID, Details: in.Description,
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(in.InputPreview), &obj) == nil && obj != nil {
		ai.Payload = json.RawMessage(in.InputPreview)
	} else if in.InputPreview != "" {
		if ai.Details != "" {
			ai.Details += "\n\n"
		}
		ai.Details += "Input, as Claude Code relayed it (cut at 200 characters):\n" + in.InputPreview
	}
	ai.Title = permissionTitle(in.ToolName, ai.Payload)
	return ai
}

// CloseRelay closes the pending card of the prompt requestID relayed in the
// caller's session, for reason (RelayAnsweredInTerminal or
// RelaySessionEnded), and returns it; a card settled already is returned as
// it is. Errors: EINVALID for another reason; ENOTFOUND when the caller's
// session has no card of that prompt.
func (s *Service) CloseRelay(ctx context.Context, c askd.Caller, requestID, reason string) (*askd.Ask, error) {
	if c.Role != askd.RoleAgent {
		return nil, askd.Errorf(askd.EFORBIDDEN, "only agent tokens close relayed prompts")
	}
	text, ok := relayClosedText[reason]
	if !ok {
		return nil, askd.Errorf(askd.EINVALID, "reason: %q is not %s or %s", clip(reason, 40), RelayAnsweredInTerminal, RelaySessionEnded)
	}
	var found *askd.Ask
	err := s.store.View(ctx, func(tx askd.Tx) error {
		f := sessionFilter(c)
		f.Kind, f.ToolUseID, f.Limit = askd.KindApproval, askd.RelayToolUsePrefix+requestID, 1
		asks, err := tx.Asks.FindAsks(ctx, f)
		if err == nil && len(asks) > 0 {
			found = asks[0]
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, askd.Errorf(askd.ENOTFOUND, "request_id: no relayed prompt %q in session %q", clip(requestID, 40), c.Session)
	}
	a, err := s.closeRelay(ctx, c, found.ID, text)
	if askd.ErrorCode(err) == askd.ECONFLICT {
		return s.Get(ctx, c, found.ID)
	}
	return a, err
}

// closeRelay cancels relayed prompt id (withdrawn, with why as the answer's
// response); there is nothing to tell the agent of it. A prompt a policy
// covers that was answered in the terminal says so: it was answered
// outside the quorum (see above).
func (s *Service) closeRelay(ctx context.Context, c askd.Caller, id int64, why string) (*askd.Ask, error) {
	return s.settle(ctx, id, func(_ askd.Tx, a *askd.Ask) (string, string, error) {
		now := s.now()
		if a.ApprovalsNeeded > 0 && why == relayClosedText[RelayAnsweredInTerminal] {
			why += fmt.Sprintf(", outside the quorum (%s here): Claude Code takes the terminal's answer, which askd can neither see nor hold back", countSoFar(a))
		}
		a.Settle(askd.StatusCancelled, askd.ReasonWithdrawn, &askd.Answer{Response: why}, c.Name, now)
		nothingToTell(a, now)
		return askd.ActionWithdrawn, why, nil
	})
}

// closeRelays closes every pending relayed prompt of c's session as
// answered in the terminal: its Stop hook says the turn is over.
func (s *Service) closeRelays(ctx context.Context, c askd.Caller) error {
	open, err := s.Open(ctx, c)
	if err != nil {
		return err
	}
	for _, a := range open {
		if _, ok := a.RelayRequestID(); !ok {
			continue
		}
		if _, err := s.closeRelay(ctx, c, a.ID, relayClosedText[RelayAnsweredInTerminal]); err != nil && askd.ErrorCode(err) != askd.ECONFLICT {
			return err
		}
	}
	return nil
}

// checkRelayAnswer refuses an answer Claude Code cannot take for a relayed
// prompt: an edited input.
func checkRelayAnswer(a *askd.Ask, ans *askd.Answer) error {
	if _, ok := a.RelayRequestID(); ok && ans.Decision == askd.DecisionModified {
		return askd.Errorf(askd.EMISMATCH, "decision: modified is not possible for ask %d: Claude Code relayed this prompt from its terminal and takes only allow or deny back; approve or reject it", a.ID)
	}
	return nil
}
