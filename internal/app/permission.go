package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// AskUserQuestion is the name of Claude Code's built-in question tool.
const AskUserQuestion = "AskUserQuestion"

// ownTools are askd's MCP tools as Claude Code names them when askd install
// wires the server as askd (mcp__<server>__<tool>); permission_prompt is not
// among them (Claude Code never asks permission for its permission tool).
var ownTools = map[string]bool{
	"mcp__askd__ask_user_question": true,
	"mcp__askd__ask":               true,
	"mcp__askd__request_approval":  true,
	"mcp__askd__check_ask":         true,
	"mcp__askd__cancel_ask":        true,
}

// AllowOwnTool is the decision for a permission request for one of askd's
// own tools: allowed at once, with no card, since what the tool does is ask
// the person; a card asking "may the agent ask you?" before the ask itself
// is noise. (askd install claude also allows them in Claude Code's settings,
// but Claude Code drops a project's allow rules until the person trusts the
// workspace, which a headless claude -p never asks.) ok is false for every
// other tool, which goes to the person.
func AllowOwnTool(in *askd.PermissionInput) (d PermissionDecision, ok bool) {
	if !ownTools[in.ToolName] {
		return PermissionDecision{}, false
	}
	return PermissionDecision{Behavior: "allow", UpdatedInput: in.Input}, true
}

// PermissionAsk turns a Claude Code permission request (the permission_prompt
// tool's input, or a PermissionRequest hook) into the ask to create: for
// AskUserQuestion a question ask built from its input, for any other tool an
// approval whose payload is the tool's input, which the person may edit.
// Claude's own input is read leniently (fields askd does not know are
// ignored); the questions then follow askd's rules like any other. Errors name
// the field under "input.".
func PermissionAsk(in *askd.PermissionInput) (*askd.AskInput, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if in.ToolName == AskUserQuestion {
		var q struct {
			Questions []askd.Question `json:"questions"`
		}
		if err := json.Unmarshal(in.Input, &q); err != nil {
			return nil, askd.Errorf(askd.EINVALID, "input.questions: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		ai := &askd.AskInput{Kind: askd.KindQuestion, Questions: q.Questions}
		if err := ai.Validate(false); err != nil {
			return nil, prefixFields(err, "input.")
		}
		return ai, nil
	}
	return &askd.AskInput{
		Kind:      askd.KindApproval,
		Title:     permissionTitle(in.ToolName, in.Input),
		Payload:   in.Input,
		ToolName:  in.ToolName,
		ToolUseID: in.ToolUseID,
	}, nil
}

// permissionTitle is the inbox line for a tool call: "Allow Bash: make test".
func permissionTitle(tool string, input json.RawMessage) string {
	var fields map[string]any
	_ = json.Unmarshal(input, &fields)
	title := "Allow " + tool
	for _, k := range []string{"command", "description", "file_path", "url", "path", "pattern"} {
		if v, ok := fields[k].(string); ok && strings.TrimSpace(v) != "" {
			// Printable: a command's control characters would make the
			// title one askd refuses, and so the request one no one sees.
			title += ": " + askd.Printable(strings.Join(strings.Fields(v), " "))
			break
		}
	}
	if utf8.RuneCountInString(title) > askd.MaxTitleChars {
		r := []rune(title)
		title = string(r[:askd.MaxTitleChars-1]) + "…"
	}
	return title
}

// prefixFields puts prefix before every "path: rule" of a validation error.
func prefixFields(err error, prefix string) error {
	if askd.ErrorCode(err) != askd.EINVALID {
		return err
	}
	parts := strings.Split(askd.ErrorMessage(err), "; ")
	for i, p := range parts {
		if !strings.HasPrefix(p, "and ") {
			parts[i] = prefix + p
		}
	}
	return &askd.Error{Code: askd.EINVALID, Message: strings.Join(parts, "; ")}
}

// PermissionDecision is Claude Code's answer to a permission request:
// {"behavior":"allow","updatedInput":{...}} or {"behavior":"deny","message":"..."}.
type PermissionDecision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// PermissionDecision returns Claude's decision for a permission ask (from PermissionAsk)
// once it is settled; input is the tool's original input. An answered
// question allows AskUserQuestion with {questions, answers}, multi-select
// labels joined with ", " as Claude expects; an approval allows the original
// or the edited input; everything else denies, saying why in words the model
// can act on. A timeout is never reported as the person's refusal.
func (s *Service) PermissionDecision(a *askd.Ask, input json.RawMessage) PermissionDecision {
	deny := func(format string, args ...any) PermissionDecision {
		return PermissionDecision{Behavior: "deny", Message: fmt.Sprintf(format, args...)}
	}
	reply := ""
	if a.Answer != nil && a.Answer.Response != "" {
		reply = " They said: " + a.Answer.Response
	}
	switch {
	case a.Pending():
		return deny("No one has decided yet (ask #%d is still pending).", a.ID)
	case a.CancelReason == askd.ReasonTimeout:
		limit := humanTimeout(a)
		if a.Kind == askd.KindQuestion {
			return deny("No one answered within %s. Proceed on your own judgement, or ask again.", limit)
		}
		return deny("No one decided within %s, so this was not allowed. It was not a refusal: ask again, or proceed without it.", limit)
	case a.CancelReason == askd.ReasonDismissed:
		if a.Kind == askd.KindQuestion {
			if reply == "" {
				return deny("The user closed the question without answering.")
			}
			return deny("The user did not pick an answer.%s", reply)
		}
		return deny("The user dismissed this request without deciding.%s", reply)
	case a.Status == askd.StatusCancelled:
		return deny("The request was %s before anyone decided.", a.CancelReason)
	}
	ans := a.Answer
	if a.Kind == askd.KindQuestion {
		if len(ans.Answers) == 0 {
			return deny("The user did not pick an answer.%s", reply)
		}
		var in struct {
			Questions json.RawMessage `json:"questions"`
		}
		_ = json.Unmarshal(input, &in)
		if in.Questions == nil {
			in.Questions, _ = json.Marshal(a.Questions)
		}
		out, _ := json.Marshal(struct {
			Questions json.RawMessage   `json:"questions"`
			Answers   map[string]string `json:"answers"`
		}{in.Questions, JoinedAnswers(a)})
		return PermissionDecision{Behavior: "allow", UpdatedInput: out}
	}
	switch ans.Decision {
	case askd.DecisionApproved:
		return PermissionDecision{Behavior: "allow", UpdatedInput: compactJSON(input)}
	case askd.DecisionModified:
		return PermissionDecision{Behavior: "allow", UpdatedInput: ans.Payload}
	}
	if ans.Comment != "" {
		return deny("The user rejected this: %s", ans.Comment)
	}
	return deny("The user rejected this.")
}

// JoinedAnswers is a question ask's answers as Claude's AskUserQuestion takes
// them: one string per question text, multi-select labels joined with ", ".
func JoinedAnswers(a *askd.Ask) map[string]string {
	out := map[string]string{}
	if a.Answer == nil {
		return out
	}
	for k, c := range a.Answer.Answers {
		out[k] = c.Joined()
	}
	return out
}

func humanTimeout(a *askd.Ask) string {
	if a.Deadline == nil {
		return "the time allowed"
	}
	return HumanDuration(a.Deadline.Sub(a.CreatedAt))
}
