package app

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askd-dev/askd"
)

// # Coding-agent CLIs beyond Claude Code and Codex (SPEC §18)
//
// Copilot CLI, Qwen Code, Gemini CLI and OpenCode each put their tool calls
// to askd through a pre-tool hook of their own (gate.go), in their own
// names. What askd makes of a call is the same for all of them, and for
// Claude Code: one name per tool for policies and rules (ToolCall.Name),
// askd's own tools allowed without a card, and an approval in the inbox for
// the rest. Under Qwen's, Gemini's and OpenCode's yolo modes that hook is
// the only gate there is, so a tool such a CLI runs unasked in its own
// default mode (a read, a search) is let through here too (askFree): a card
// for every file read would make the inbox useless.

// CLI names a coding-agent CLI whose hooks askd speaks besides Claude
// Code's and Codex's (SPEC §18).
type CLI string

// The CLIs, by the names of askd hook --cli, askd install and /hooks/NAME.
const (
	CLICopilot  CLI = "copilot"
	CLIQwen     CLI = "qwen"
	CLIGemini   CLI = "gemini"
	CLIOpenCode CLI = "opencode"
)

// CLIs are the CLIs of SPEC §18, in its order.
var CLIs = []CLI{CLICopilot, CLIQwen, CLIGemini, CLIOpenCode}

// ParseCLI returns the CLI named s; EINVALID naming the ones there are.
func ParseCLI(s string) (CLI, error) {
	for _, c := range CLIs {
		if string(c) == s {
			return c, nil
		}
	}
	return "", askd.Errorf(askd.EINVALID, "cli: %q is not one of copilot, qwen, gemini, opencode", s)
}

// Title is the CLI's name as people know it: "Gemini CLI".
func (cli CLI) Title() string {
	switch cli {
	case CLICopilot:
		return "Copilot CLI"
	case CLIQwen:
		return "Qwen Code"
	case CLIGemini:
		return "Gemini CLI"
	case CLIOpenCode:
		return "OpenCode"
	}
	return string(cli)
}

// RunsEdits reports whether the CLI runs a tool call with input a person
// edited: only OpenCode, whose plugin changes the call's arguments before
// it runs. Copilot's permissionRequest answers allow or deny only; Gemini's
// BeforeTool can merge fields into the model's arguments, but not take one
// out, so the call run would not be the one the person approved; and Qwen
// Code 0.24.4, whose documentation lists Claude Code's updatedInput for
// PreToolUse, reads only the decision, its reason and added context there
// (firePreToolUseHook): the original call would run, unedited, on a
// person's edit. (SPEC §18 counts Qwen among the CLIs that run edits; its
// code says otherwise, and running what the person did not approve is the
// one outcome a gate must never have.)
func (cli CLI) RunsEdits() bool { return cli == CLIOpenCode }

// A ToolCall is a tool call a CLI's pre-tool hook puts to askd, in the CLI's
// own terms.
type ToolCall struct {
	CLI   CLI
	Tool  string          // the CLI's name for the tool: run_shell_command, askd/ask
	Input json.RawMessage // the tool's arguments, a JSON object, as the CLI gives them
	// ID is the CLI's id of the call, "" when it gives none: the same call
	// asked again (a hook retried) re-attaches to its ask by it.
	ID string
	// MCPServer and MCPTool name the MCP server and its tool when the CLI
	// says which they are (Gemini's mcp_context; OpenCode's plugin, which
	// looks the server up in its MCP config), "" otherwise.
	MCPServer, MCPTool string
}

// shellTools are each CLI's shell tool, which policies and rules see as
// Claude Code's Bash, its command line in "command" as Bash's (all four
// name the field so).
var shellTools = map[CLI]map[string]bool{
	CLICopilot:  {"bash": true, "powershell": true},
	CLIQwen:     {"run_shell_command": true},
	CLIGemini:   {"run_shell_command": true},
	CLIOpenCode: {"bash": true},
}

// Name is the tool's name as policies and rules see it (SPEC §18): an MCP
// tool mcp__SERVER__TOOL, each CLI's shell tool Bash, any other tool its
// name in the CLI. A CLI's MCP name is read only where it cannot be
// misread: Qwen's is Claude Code's already, Copilot's permission request
// says SERVER/TOOL, and Gemini and OpenCode join server and tool with an
// underscore that either may hold, so for them the hook must say which is
// which (MCPServer, MCPTool); without that the name stays the CLI's.
func (t *ToolCall) Name() string {
	switch {
	case t.MCPServer != "" && t.MCPTool != "":
		return mcpName(t.MCPServer, t.MCPTool)
	case shellTools[t.CLI][t.Tool]:
		return "Bash"
	case t.CLI == CLICopilot:
		if server, tool, ok := strings.Cut(t.Tool, "/"); ok && server != "" && tool != "" {
			return mcpName(server, tool)
		}
	}
	return t.Tool
}

func mcpName(server, tool string) string { return "mcp__" + server + "__" + tool }

// askdTools are askd's MCP tools an agent calls to ask (ownTools, in Claude
// Code's names, holds them as mcp__askd__TOOL).
var askdTools = []string{"ask_user_question", "ask", "request_approval", "check_ask", "cancel_ask"}

// ownToolNames are askd's tools under each CLI's own naming, for a hook
// that does not say which MCP server a tool is of (SPEC §18: mcp_askd_ask,
// askd_ask, askd-ask, askd/ask); askd install names the server askd.
var ownToolNames = func() map[CLI]map[string]bool {
	forms := map[CLI][]string{
		CLICopilot:  {"askd/", "askd-"},
		CLIQwen:     {"mcp__askd__"},
		CLIGemini:   {"mcp_askd_"},
		CLIOpenCode: {"askd_"},
	}
	m := map[CLI]map[string]bool{}
	for cli, prefixes := range forms {
		m[cli] = map[string]bool{}
		for _, p := range prefixes {
			for _, t := range askdTools {
				m[cli][p+t] = true
			}
		}
	}
	return m
}()

// own reports whether the call is of one of askd's own tools, which only
// put words in the person's inbox: allowed at once, with no card (see
// AllowOwnTool).
func (t *ToolCall) own() bool {
	return ownTools[t.Name()] || ownToolNames[t.CLI][t.Tool]
}

// askFree are, per CLI, the tools it runs without asking in its own
// default mode: reads, searches, its to-do list, skills. Under the yolo
// mode of Qwen, Gemini and OpenCode every call comes to askd's hook, and
// these go through it with no card; every other tool, an unknown one
// included, waits for a person. Copilot asks its hook only what it would
// ask a person.
var askFree = map[CLI]map[string]bool{
	CLIQwen: set("read_file", "list_directory", "glob", "grep_search", "todo_write", "skill", "tool_search",
		"lsp", "read_mcp_resource", "web_search", "agent", "enter_plan_mode", "task_list", "list_agents",
		"get_goal", "zoom_image", "structured_output"),
	CLIGemini: set("read_file", "read_many_files", "list_directory", "glob", "grep_search", "search_file_content",
		"google_web_search", "write_todos", "activate_skill", "get_internal_docs", "list_mcp_resources",
		"read_mcp_resource", "enter_plan_mode", "complete_task", "update_topic", "tracker_create_task",
		"tracker_update_task", "tracker_get_task", "tracker_list_tasks", "tracker_add_dependency", "tracker_visualize"),
	CLIOpenCode: set("read", "glob", "grep", "list", "lsp", "skill", "todowrite", "todoread", "websearch",
		"codesearch", "task", "question", "invalid"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// free reports whether the call goes through with no card: one of askd's
// own tools, or one the CLI runs unasked in its default mode. An MCP tool
// is never free: a CLI asks before each (unless told to trust its server).
func (t *ToolCall) free() bool {
	return t.own() || t.MCPServer == "" && askFree[t.CLI][t.Tool]
}

// validate checks the call as a permission prompt's input is checked, the
// errors naming its fields as the hook gives them.
func (t *ToolCall) validate() error {
	in := askd.PermissionInput{ToolName: t.Tool, Input: t.Input, ToolUseID: t.ID}
	return in.Validate()
}

// editRefused is the deny a person's edit becomes for a CLI that cannot
// run an edited call (SPEC §18): their input, for the model to call again
// with if it agrees.
func editRefused(cli CLI, a *askd.Ask) string {
	edited := string(compactJSON(a.Answer.Payload))
	msg := fmt.Sprintf("The person would allow this only with their changes, and %s cannot run a call changed by its hook, so it was not run. Their input: %s. Call it again with that input if you agree.", cli.Title(), edited)
	if a.Answer.Comment != "" {
		msg += " They said: " + a.Answer.Comment
	}
	return msg
}
