package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// GateDecision is askd's answer to a CLI's pre-tool hook (Service.Gate).
type GateDecision struct {
	Allow bool
	// Input is, when allowed, the input to run the call with: its own, or
	// the person's edit of it (Edited; only for a CLI that RunsEdits). It
	// is in the CLI's own fields: askd keeps the call's input as the
	// approval's payload, which is what a person edits.
	Input  json.RawMessage
	Edited bool
	// Message is, when denied, why, in words for the model.
	Message string
	// Ask is the ask decided on, 0 when the call needed none.
	Ask int64
}

// Gate decides a tool call a CLI's pre-tool hook puts to askd (SPEC §18):
// allowed at once when it is one of askd's own tools or one the CLI runs
// unasked in its default mode; otherwise an approval in the inbox under
// the call's one name (ToolCall.Name) and the CLI's own (agent_tool), which
// policies and rules decide as any other, and whose outcome is the
// decision. A person's edit is the input to run where the CLI can run it,
// and a deny naming it where it cannot (the approval then has no_edit set,
// and the inbox offers no Edit).
//
// wait > 0 bounds the wait, for a hook the CLI kills at its own timeout
// (askd's wait ends first, and a killed hook would let the call run): past
// it, the call is denied, and the approval stays in the inbox to be told
// once decided (AwaitGrace). 0 waits to the approval's deadline.
//
// A call askd cannot take (a field it refuses, a cap reached) is a deny
// naming the problem. Errors are the store's, ctx's (the ask is cut off:
// it stays pending, to be told), a *ShutdownError, EUNAUTHORIZED when the
// token is revoked; a hook fails closed on each.
func (s *Service) Gate(ctx context.Context, c askd.Caller, t *ToolCall, wait time.Duration) (GateDecision, error) {
	if err := t.validate(); err != nil {
		return GateDecision{Message: "askd refused this: " + askd.ErrorMessage(err)}, nil
	}
	if t.free() {
		return GateDecision{Allow: true, Input: t.Input}, nil
	}
	name := t.Name()
	a, err := s.Create(ctx, c, &askd.AskInput{
		Kind:      askd.KindApproval,
		Title:     permissionTitle(name, t.Input),
		Payload:   t.Input,
		ToolName:  name,
		ToolUseID: t.ID,
	}, CreateOptions{AgentTool: t.Tool, NoEdit: !t.CLI.RunsEdits()})
	if code := askd.ErrorCode(err); code == askd.EINVALID || code == askd.ELIMIT {
		return GateDecision{Message: "askd refused this: " + askd.ErrorMessage(err)}, nil
	} else if err != nil {
		return GateDecision{}, err
	}
	w := Wait{Ask: a.ID, Mode: AwaitAnswer}
	if wait > 0 {
		w.Mode, w.Until = AwaitGrace, time.Now().Add(wait)
	}
	settled, err := s.AwaitOutcome(ctx, c, w, nil)
	if err != nil {
		return GateDecision{Ask: a.ID}, err
	}
	return s.gateDecision(t, settled, wait), nil
}

// gateDecision is the decision an approval's outcome makes of the call t.
func (s *Service) gateDecision(t *ToolCall, a *askd.Ask, wait time.Duration) GateDecision {
	d := GateDecision{Ask: a.ID}
	switch {
	case a.Pending():
		d.Message = fmt.Sprintf("No one decided within %s, the time %s gives its hook, so this was not run. It was not a refusal: ask #%d stays in the person's inbox, and once they decide you will be told; then call it again if it is still needed.", HumanDuration(wait), t.CLI.Title(), a.ID)
		return d
	case a.Status == askd.StatusAnswered && a.Answer.Decision == askd.DecisionModified && a.NoEdit:
		d.Message = editRefused(t.CLI, a)
		return d
	}
	pd := s.PermissionDecision(a, t.Input)
	if pd.Behavior != "allow" {
		d.Message = pd.Message
		return d
	}
	d.Allow, d.Input = true, pd.UpdatedInput
	d.Edited = a.Answer.Decision == askd.DecisionModified
	return d
}
