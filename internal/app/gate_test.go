package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// TestToolCallName: policies and rules see every CLI's shell tool as Bash
// and every MCP tool as mcp__SERVER__TOOL, where the CLI's hook says which
// server; a name that cannot be read safely stays the CLI's.
func TestToolCallName(t *testing.T) {
	for _, c := range []struct {
		name string
		call app.ToolCall
		want string
	}{
		{"copilot's shell", app.ToolCall{CLI: app.CLICopilot, Tool: "bash"}, "Bash"},
		{"copilot's MCP tool", app.ToolCall{CLI: app.CLICopilot, Tool: "github/create_issue"}, "mcp__github__create_issue"},
		{"copilot's own tool", app.ToolCall{CLI: app.CLICopilot, Tool: "create"}, "create"},
		{"qwen's shell", app.ToolCall{CLI: app.CLIQwen, Tool: "run_shell_command"}, "Bash"},
		{"qwen's MCP tool", app.ToolCall{CLI: app.CLIQwen, Tool: "mcp__github__create_issue"}, "mcp__github__create_issue"},
		{"gemini's shell", app.ToolCall{CLI: app.CLIGemini, Tool: "run_shell_command"}, "Bash"},
		{"gemini's MCP tool with its context", app.ToolCall{CLI: app.CLIGemini, Tool: "mcp_my_server_do_it", MCPServer: "my_server", MCPTool: "do_it"}, "mcp__my_server__do_it"},
		{"gemini's MCP tool without one", app.ToolCall{CLI: app.CLIGemini, Tool: "mcp_my_server_do_it"}, "mcp_my_server_do_it"},
		{"opencode's shell", app.ToolCall{CLI: app.CLIOpenCode, Tool: "bash"}, "Bash"},
		{"opencode's MCP tool, the server from its config", app.ToolCall{CLI: app.CLIOpenCode, Tool: "my_server_do_it", MCPServer: "my_server", MCPTool: "do_it"}, "mcp__my_server__do_it"},
		{"a shell name of another CLI", app.ToolCall{CLI: app.CLIGemini, Tool: "bash"}, "bash"},
	} {
		if got := c.call.Name(); got != c.want {
			t.Errorf("%s: Name() = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestGateFree: askd's own tools under every CLI's naming, and the tools a
// CLI runs unasked in its own default mode, are allowed at once, their
// input as it came, and no ask is made.
func TestGateFree(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := context.Background()
	input := json.RawMessage(`{"kind":"ready","title":"done"}`)
	for _, call := range []app.ToolCall{
		{CLI: app.CLICopilot, Tool: "askd/ask"},
		{CLI: app.CLICopilot, Tool: "askd-ask"},
		{CLI: app.CLIQwen, Tool: "mcp__askd__ask"},
		{CLI: app.CLIGemini, Tool: "mcp_askd_ask"},
		{CLI: app.CLIGemini, Tool: "mcp_askd_check_ask", MCPServer: "askd", MCPTool: "check_ask"},
		{CLI: app.CLIOpenCode, Tool: "askd_ask"},
		{CLI: app.CLIOpenCode, Tool: "askd_request_approval", MCPServer: "askd", MCPTool: "request_approval"},
		{CLI: app.CLIGemini, Tool: "read_file"},
		{CLI: app.CLIQwen, Tool: "grep_search"},
		{CLI: app.CLIOpenCode, Tool: "read"},
	} {
		call.Input = input
		d, err := svc.Gate(ctx, agentCaller, &call, 0)
		if err != nil || !d.Allow || string(d.Input) != string(input) || d.Ask != 0 {
			t.Errorf("%s %s: %+v, %v; want allowed at once, no ask", call.CLI, call.Tool, d, err)
		}
	}
	if open, err := svc.Open(ctx, agentCaller); err != nil || len(open) != 0 {
		t.Fatalf("open asks %v, %v; want none", open, err)
	}
	// Not free: askd's tools under another CLI's naming, a CLI's read tool
	// of another server, permission_prompt.
	for _, call := range []app.ToolCall{
		{CLI: app.CLIGemini, Tool: "askd_ask"},
		{CLI: app.CLIOpenCode, Tool: "mcp_askd_ask"},
		{CLI: app.CLIOpenCode, Tool: "fs_read", MCPServer: "fs", MCPTool: "read"},
		{CLI: app.CLIQwen, Tool: "mcp__askd__permission_prompt"},
	} {
		call.Input = input
		d, err := svc.Gate(ctx, agentCaller, &call, time.Millisecond)
		if err != nil || d.Allow || d.Ask == 0 {
			t.Errorf("%s %s: %+v, %v; want an approval", call.CLI, call.Tool, d, err)
		}
	}
}

// gateAsk runs Gate for call in the background and returns the approval it
// waits on, and the decision to come.
func gateAsk(t *testing.T, svc *app.Service, call *app.ToolCall) (*askd.Ask, <-chan app.GateDecision) {
	t.Helper()
	out := make(chan app.GateDecision, 1)
	go func() {
		d, err := svc.Gate(context.Background(), agentCaller, call, 0)
		if err != nil {
			t.Error(err)
		}
		out <- d
	}()
	waiting(t, svc, 1)
	open, err := svc.Open(context.Background(), agentCaller)
	if err != nil || len(open) != 1 {
		t.Fatalf("open asks %v, %v; want the approval", open, err)
	}
	return open[0], out
}

// TestGateApproval: a shell call of each CLI waits in the inbox as "Allow
// Bash: ...", tool_name Bash, agent_tool the CLI's name, the input as its
// payload, no_edit where the CLI cannot run an edit; the person's decision
// is the hook's: approved runs the call's own input, rejected denies with
// their comment.
func TestGateApproval(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := context.Background()
	for _, c := range []struct {
		cli    app.CLI
		tool   string
		noEdit bool
	}{
		{app.CLICopilot, "bash", true},
		{app.CLIQwen, "run_shell_command", true},
		{app.CLIGemini, "run_shell_command", true},
		{app.CLIOpenCode, "bash", false},
	} {
		t.Run(string(c.cli), func(t *testing.T) {
			input := json.RawMessage(`{"command":"make   test","description":"run the tests"}`)
			a, decided := gateAsk(t, svc, &app.ToolCall{CLI: c.cli, Tool: c.tool, Input: input, ID: "call-" + string(c.cli)})
			if a.Title != "Allow Bash: make test" || a.ToolName != "Bash" || a.AgentTool != c.tool || a.NoEdit != c.noEdit ||
				string(a.Payload) != `{"command":"make   test","description":"run the tests"}` || a.ToolUseID != "call-"+string(c.cli) || a.Deadline == nil {
				t.Fatalf("approval %+v", a)
			}
			if _, err := svc.Answer(ctx, humanCaller, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
				t.Fatal(err)
			}
			if d := <-decided; !d.Allow || d.Edited || string(d.Input) != string(a.Payload) || d.Ask != a.ID {
				t.Fatalf("decision %+v, want allowed with the call's own input", d)
			}
			a, decided = gateAsk(t, svc, &app.ToolCall{CLI: c.cli, Tool: c.tool, Input: json.RawMessage(`{"command":"rm -rf build"}`)})
			if _, err := svc.Answer(ctx, humanCaller, a.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "keep the build"}); err != nil {
				t.Fatal(err)
			}
			if d := <-decided; d.Allow || d.Message != "The user rejected this: keep the build" {
				t.Fatalf("decision %+v, want a deny with the comment", d)
			}
		})
	}
}

// TestGateEdit: a person's edit is the input to run where the CLI can run
// it (OpenCode), and a deny naming it where it cannot (Copilot, Qwen,
// Gemini), which the model can act on.
func TestGateEdit(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := context.Background()
	edited := json.RawMessage(`{"command":"make test-short"}`)
	for _, c := range []struct {
		cli  app.CLI
		tool string
	}{
		{app.CLICopilot, "bash"},
		{app.CLIQwen, "run_shell_command"},
		{app.CLIGemini, "run_shell_command"},
		{app.CLIOpenCode, "bash"},
	} {
		t.Run(string(c.cli), func(t *testing.T) {
			a, decided := gateAsk(t, svc, &app.ToolCall{CLI: c.cli, Tool: c.tool, Input: json.RawMessage(`{"command":"make test"}`)})
			if _, err := svc.Answer(ctx, humanCaller, a.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: edited, Comment: "the short one"}); err != nil {
				t.Fatal(err)
			}
			d := <-decided
			if c.cli.RunsEdits() {
				if !d.Allow || !d.Edited || string(d.Input) != string(edited) {
					t.Fatalf("decision %+v, want allowed with the edit", d)
				}
				return
			}
			if d.Allow || !strings.Contains(d.Message, `Their input: {"command":"make test-short"}.`) ||
				!strings.Contains(d.Message, c.cli.Title()+" cannot run a call changed by its hook") || !strings.HasSuffix(d.Message, "They said: the short one") {
				t.Fatalf("decision %+v, want a deny naming the edit", d)
			}
		})
	}
}

// TestGateWaitEndsFirst: a hook's wait bound ends the wait before the
// approval's deadline: the call is denied, saying no one decided in the
// time the CLI gives its hook, and the approval stays pending, to be told
// once decided.
func TestGateWaitEndsFirst(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := context.Background()
	d, err := svc.Gate(ctx, agentCaller, &app.ToolCall{CLI: app.CLIGemini, Tool: "run_shell_command", Input: json.RawMessage(`{"command":"deploy"}`)}, 20*time.Millisecond)
	if err != nil || d.Allow || d.Ask == 0 || !strings.Contains(d.Message, "the time Gemini CLI gives its hook, so this was not run") {
		t.Fatalf("decision %+v, %v", d, err)
	}
	a, err := svc.Check(ctx, agentCaller, d.Ask)
	if err != nil || !a.Pending() || !a.ToBeTold {
		t.Fatalf("the approval after the wait: %+v, %v; want pending, to be told", a, err)
	}
}

// TestGatePolicyCoversEveryShell: one policy on Bash's command ("2
// approvals for git push") covers the shell of every CLI; a rule on Bash
// allows each at once.
func TestGatePolicyCoversEveryShell(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := context.Background()
	if _, err := svc.CreatePolicy(ctx, humanCaller, &askd.PolicyInput{Match: askd.MatchPrefix, Tool: "Bash", Prefix: "git push", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []app.TokenSpec{{Name: agentCaller.Name, Role: askd.RoleAgent}, {Name: humanCaller.Name, Role: askd.RoleHuman, Access: askd.AccessAdmin}} {
		if _, _, err := svc.CreateToken(ctx, app.Itself, spec); err != nil {
			t.Fatal(err) // a rule is made by and for tokens there are
		}
	}
	first, err := svc.Gate(ctx, agentCaller, &app.ToolCall{CLI: app.CLICopilot, Tool: "bash", Input: json.RawMessage(`{"command":"make lint"}`)}, time.Millisecond)
	if err != nil || first.Ask == 0 {
		t.Fatalf("%+v, %v", first, err)
	}
	if _, err := svc.CreateRule(ctx, humanCaller, &askd.RuleInput{AskID: first.Ask, Effect: askd.EffectAllow, Match: askd.MatchPrefix, Prefix: "make", RuleLife: askd.RuleLife{For: "1h"}}); err != nil {
		t.Fatal(err)
	}
	for _, call := range []app.ToolCall{
		{CLI: app.CLICopilot, Tool: "bash"},
		{CLI: app.CLIQwen, Tool: "run_shell_command"},
		{CLI: app.CLIGemini, Tool: "run_shell_command"},
		{CLI: app.CLIOpenCode, Tool: "bash"},
	} {
		call.Input = json.RawMessage(`{"command":"make test"}`)
		if d, err := svc.Gate(ctx, agentCaller, &call, 0); err != nil || !d.Allow {
			t.Errorf("%s: %+v, %v; want allowed by the rule", call.CLI, d, err)
		}
		call.Input = json.RawMessage(`{"command":"git push origin main"}`)
		d, err := svc.Gate(ctx, agentCaller, &call, time.Millisecond)
		if err != nil || d.Ask == 0 {
			t.Fatalf("%s: %+v, %v", call.CLI, d, err)
		}
		a, err := svc.Check(ctx, agentCaller, d.Ask)
		if err != nil || a.ApprovalsNeeded != 2 {
			t.Errorf("%s: the push's approval needs %d approvals (%v), want 2", call.CLI, a.ApprovalsNeeded, err)
		}
	}
}

// TestGateRefused: input askd cannot take is a deny naming the problem,
// never an error that would leave the CLI to decide.
func TestGateRefused(t *testing.T) {
	svc := newService(t, app.Config{})
	d, err := svc.Gate(context.Background(), agentCaller, &app.ToolCall{CLI: app.CLIQwen, Tool: "run_shell_command", Input: json.RawMessage(`"ls"`)}, 0)
	if err != nil || d.Allow || !strings.HasPrefix(d.Message, "askd refused this: input: ") {
		t.Fatalf("%+v, %v", d, err)
	}
}
