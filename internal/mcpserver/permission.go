package mcpserver

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// claudeToolUseMeta is where Claude Code puts the tool use id in a call's _meta.
const claudeToolUseMeta = "claudecode/toolUseId"

// permissionPrompt is Claude Code's --permission-prompt-tool. Its result is
// one text block holding Claude's decision as a JSON string and no
// structuredContent: Claude Code parses the text, and would show the model
// structuredContent instead of it.
func (t *tools) permissionPrompt(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c, err := t.caller(ctx)
	if err != nil {
		return nil, err
	}
	var in askd.PermissionInput
	if err := decodeArgs(req, &in); err != nil {
		return errorResult(err), nil
	}
	if in.ToolUseID == "" {
		if id, ok := req.Params.Meta[claudeToolUseMeta].(string); ok {
			in.ToolUseID = id
		}
	}
	ai, err := app.PermissionAsk(&in)
	if err != nil {
		return errorResult(err), nil
	}
	a, err := t.svc.Create(ctx, c, ai, app.CreateOptions{})
	if err != nil {
		return errorResult(err), nil
	}
	a, err = t.block(ctx, req, c, a, time.Time{}, true)
	if err != nil {
		return errorResult(err), nil
	}
	if !a.Pending() {
		if a, err = t.svc.Check(context.WithoutCancel(ctx), c, a.ID); err != nil {
			return errorResult(err), nil
		}
	}
	d := t.svc.Decide(a, in.Input)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(marshal(d))}}}, nil
}
