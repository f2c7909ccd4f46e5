package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// The hooks of the coding-agent CLIs beyond Claude Code and Codex (SPEC
// §18): POST /hooks/copilot, /hooks/qwen, /hooks/gemini, /hooks/opencode,
// each taking the CLI's own hook input and answering in its own shape,
// over the same app calls as Claude Code's hooks: Gate for the pre-tool
// hook, StopHook for the next-prompt one. askd hook --cli NAME posts here
// (and turns any failure into the CLI's own deny); OpenCode's plugin posts
// here itself.
//
// Each CLI's two events:
//
//	cli       pre-tool hook          next-prompt hook   reply of the next-prompt hook
//	copilot   permissionRequest      agentStop          {"decision":"block","reason":R}
//	qwen      PreToolUse             Stop               {"decision":"block","reason":R}
//	gemini    BeforeTool             AfterAgent         {"decision":"deny","reason":R}
//	opencode  tool.execute.before    session.idle       {"decision":"block","reason":R}
//
// and {} when there is nothing to tell. The event is ?event=, else the
// input's hook_event_name (Copilot's camelCase input has none, so its
// hook says it).

// agentHookEvents are each CLI's pre-tool and next-prompt hook events.
var agentHookEvents = map[app.CLI]struct{ gate, stop string }{
	app.CLICopilot:  {"permissionRequest", "agentStop"},
	app.CLIQwen:     {"PreToolUse", "Stop"},
	app.CLIGemini:   {"BeforeTool", "AfterAgent"},
	app.CLIOpenCode: {"tool.execute.before", "session.idle"},
}

// AgentHookEvents returns the CLI's pre-tool and next-prompt hook events,
// as its hook input and askd hook --event name them.
func AgentHookEvents(cli app.CLI) (gate, stop string) {
	e := agentHookEvents[cli]
	return e.gate, e.stop
}

// agentHookInput is what askd reads of a CLI's hook input: Qwen's and
// Gemini's snake_case fields (Claude Code's), which OpenCode's plugin sends
// too, and Copilot's camelCase ones. Fields askd does not read are ignored.
type agentHookInput struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     callID          `json:"tool_use_id"`
	MCPContext    *struct {
		ServerName string `json:"server_name"`
		ToolName   string `json:"tool_name"`
	} `json:"mcp_context"`

	// Copilot
	SessionIDCamel string          `json:"sessionId"`
	ToolNameCamel  string          `json:"toolName"`
	ToolInputCamel json.RawMessage `json:"toolInput"`
	ToolArgs       json.RawMessage `json:"toolArgs"`
	ToolCallID     callID          `json:"toolCallId"`
}

// callID is a CLI's id of a tool call: a string, or a number as written; any
// other value is no id. An id is only ever used to re-attach a retried call,
// so one askd cannot read must not fail the hook.
type callID string

func (id *callID) UnmarshalJSON(data []byte) error {
	var s string
	switch {
	case json.Unmarshal(data, &s) == nil:
		*id = callID(s)
	case len(data) > 0 && (data[0] == '-' || data[0] >= '0' && data[0] <= '9'):
		*id = callID(data)
	}
	return nil
}

// toolCall is the input's tool call, in the CLI's own terms. Copilot's
// arguments come as toolInput or toolArgs, an object or a JSON string
// holding one.
func (in *agentHookInput) toolCall(cli app.CLI) *app.ToolCall {
	t := &app.ToolCall{CLI: cli, Tool: in.ToolName, Input: in.ToolInput, ID: string(in.ToolUseID)}
	if cli == app.CLICopilot {
		t.Tool, t.ID = in.ToolNameCamel, string(in.ToolCallID)
		t.Input = in.ToolInputCamel
		if len(t.Input) == 0 {
			t.Input = in.ToolArgs
		}
		var s string
		if json.Unmarshal(t.Input, &s) == nil && json.Valid([]byte(s)) {
			t.Input = json.RawMessage(s)
		}
	}
	if in.MCPContext != nil {
		t.MCPServer, t.MCPTool = in.MCPContext.ServerName, in.MCPContext.ToolName
	}
	return t
}

func (in *agentHookInput) sessionID() string {
	if in.SessionIDCamel != "" {
		return in.SessionIDCamel
	}
	return in.SessionID
}

// agentHook answers a CLI's hook (see the top of this file), authenticated
// with the agent token. The session is the Askd-Session header, else the
// hook's session id when it is a valid session name (its Stop hook then
// tells of the token's own session too, as Claude Code's does). A hook
// askd cannot answer (a bad input, the server stopping) gets an error
// status, which askd hook turns into the CLI's deny; an event askd does not
// handle gets {}.
func (s *Server) agentHook(w http.ResponseWriter, r *http.Request) {
	cli, err := app.ParseCLI(r.PathValue("cli"))
	if err != nil {
		s.writeError(w, r, askd.Errorf(askd.ENOTFOUND, "no hooks for %q: askd's are claude, copilot, qwen, gemini and opencode", r.PathValue("cli")))
		return
	}
	c, err := s.caller(r)
	if err == nil {
		err = s.allowed(r, c, askd.RoleAgent)
	}
	var in agentHookInput
	if err == nil {
		err = readAgentHook(w, r, &in)
	}
	event := r.URL.Query().Get("event")
	if event == "" {
		event = in.HookEventName
	}
	noteHook(r, event)
	var also []askd.Caller
	if id := in.sessionID(); err == nil && r.Header.Get(SessionHeader) == "" && id != "" && askd.ValidName("session_id", id) == nil {
		also = append(also, c)
		c.Session = id
	}
	if err == nil {
		var out any
		if out, err = s.answerAgentHook(r, cli, event, c, &in, also); err == nil {
			writeJSON(w, http.StatusOK, out)
			return
		}
	}
	s.writeError(w, r, err)
}

func readAgentHook(w http.ResponseWriter, r *http.Request, in *agentHookInput) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, askd.MaxBodyBytes))
	if err != nil {
		return askd.Errorf(askd.EINVALID, "body: larger than %d bytes (1 MiB)", askd.MaxBodyBytes)
	}
	return askd.DecodeOpen(data, in)
}

// answerAgentHook makes the one app call the event needs and shapes its
// result in the CLI's own reply.
func (s *Server) answerAgentHook(r *http.Request, cli app.CLI, event string, c askd.Caller, in *agentHookInput, also []askd.Caller) (any, error) {
	wait, err := waitParam(r)
	if err != nil {
		return nil, err
	}
	switch events := agentHookEvents[cli]; event {
	case events.gate:
		d, err := s.app.Gate(r.Context(), c, in.toolCall(cli), wait)
		if d.Ask != 0 {
			noteAsk(r.Context(), d.Ask)
		}
		var sd *app.ShutdownError
		if errors.As(err, &sd) {
			return nil, askd.Errorf(askd.EUNAVAILABLE, "server shutting down: askd gave no decision for ask %d, which stays in the inbox", sd.Ask)
		} else if err != nil {
			return nil, err
		}
		return gateReply(cli, d), nil
	case events.stop:
		text, err := s.app.StopHook(r.Context(), append([]askd.Caller{c}, also...), wait)
		if err != nil || text == "" {
			return noop, err
		}
		verb := "block"
		if cli == app.CLIGemini {
			verb = "deny" // Gemini's AfterAgent: deny the reply, retry with reason as the prompt
		}
		return stopOutput{Decision: verb, Reason: text}, nil
	}
	return noop, nil
}

// gateReply is a Gate decision in the CLI's own reply to its pre-tool hook.
func gateReply(cli app.CLI, d app.GateDecision) any {
	switch cli {
	case app.CLICopilot:
		if d.Allow {
			return map[string]string{"behavior": "allow"}
		}
		return map[string]string{"behavior": "deny", "message": d.Message}
	case app.CLIQwen:
		// Claude Code's shape; Qwen requires a reason with every decision,
		// and runs no edited call (app.CLI.RunsEdits): no updatedInput.
		var out preToolUseOutput
		out.HookSpecificOutput.HookEventName = "PreToolUse"
		out.HookSpecificOutput.PermissionDecision = "deny"
		out.HookSpecificOutput.PermissionDecisionReason = d.Message
		if d.Allow {
			out.HookSpecificOutput.PermissionDecision = "allow"
			out.HookSpecificOutput.PermissionDecisionReason = allowedBy(d)
		}
		return out
	case app.CLIOpenCode:
		if d.Allow && d.Edited {
			return struct {
				Decision string          `json:"decision"`
				Args     json.RawMessage `json:"args"`
			}{"allow", d.Input}
		}
	}
	if d.Allow {
		return map[string]string{"decision": "allow"}
	}
	return map[string]string{"decision": "deny", "reason": d.Message}
}

// GateDeny is the CLI's own reply to its pre-tool hook denying the call with
// message: what askd hook prints when it cannot get askd's decision (SPEC
// §18: fail closed), in the shape askd's own denies take.
func GateDeny(cli app.CLI, message string) any {
	return gateReply(cli, app.GateDecision{Message: message})
}

// allowedBy says why a call was allowed, where a CLI wants a reason.
func allowedBy(d app.GateDecision) string {
	if d.Ask == 0 {
		return "askd: allowed without asking"
	}
	return "askd: allowed"
}
