package mcpserver

import (
	"context"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// claudeToolUseMeta is where Claude Code puts the tool use id in a call's _meta.
const claudeToolUseMeta = "claudecode/toolUseId"

// permissionPrompt is Claude Code's --permission-prompt-tool. Its result is
// one text block holding Claude's decision as a JSON string and no
// structuredContent: Claude Code parses the text, and would show the model
// structuredContent instead of it.
func (t *tools) permissionPrompt(ctx context.Context, c askd.Caller, in call) (result, *wait) {
	var prompt permissionPromptInput
	if err := in.decode(&prompt); err != nil {
		return errorResult(err), nil
	}
	args := askd.PermissionInput(prompt)
	if args.ToolUseID == "" {
		args.ToolUseID = in.toolUseID
	}
	if d, ok := app.AllowOwnTool(&args); ok {
		return result{text: marshal(d)}, nil
	}
	ai, err := app.PermissionAsk(&args)
	if err != nil {
		return errorResult(err), nil
	}
	a, err := t.svc.Create(ctx, c, ai, app.CreateOptions{})
	if err != nil {
		return errorResult(err), nil
	}
	return result{}, &wait{Wait: app.Wait{Ask: a.ID, Mode: app.AwaitAnswer}, done: func(a *askd.Ask, err error) result {
		if err != nil {
			return errorResult(err)
		}
		return result{text: marshal(t.svc.PermissionDecision(a, args.Input))}
	}}
}
