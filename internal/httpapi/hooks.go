package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// hookInput is the part of a Claude Code hook call askd reads. Claude adds
// fields from version to version, so fields askd does not know are ignored
// (askd.DecodeOpen); the rest is strict JSON.
type hookInput struct {
	SessionID      string          `json:"session_id"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	StopHookActive bool            `json:"stop_hook_active"`

	// Elicitation (SPEC §9)
	MCPServerName   string          `json:"mcp_server_name"`
	Message         string          `json:"message"`
	Mode            string          `json:"mode"`
	RequestedSchema json.RawMessage `json:"requested_schema"`
	URL             string          `json:"url"`
}

// elicitationOutput is Elicitation's reply in Claude Code's shape: what
// Claude Code answers the MCP server.
type elicitationOutput struct {
	HookSpecificOutput struct {
		HookEventName string `json:"hookEventName"`
		Action        string `json:"action"`
		Content       any    `json:"content,omitempty"` // an empty form's {} too

	} `json:"hookSpecificOutput"`
}

// preToolUseOutput is PreToolUse's reply in Claude Code's shape.
type preToolUseOutput struct {
	HookSpecificOutput struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
		UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	} `json:"hookSpecificOutput"`
}

// permissionRequestOutput is PermissionRequest's reply in Claude Code's shape.
type permissionRequestOutput struct {
	HookSpecificOutput struct {
		HookEventName string                 `json:"hookEventName"`
		Decision      app.PermissionDecision `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// stopOutput makes Claude go on with reason as its next instruction.
type stopOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// claudeHook answers Claude Code's http hooks (SPEC §4), authenticated with
// the agent token as a bearer token. The session is the Askd-Session header,
// else the hook's session_id. Events and tools askd does not handle get {},
// which changes nothing; a hook's error reply never stops the agent (Claude
// treats non-2xx replies as non-blocking).
func (s *Server) claudeHook(w http.ResponseWriter, r *http.Request) {
	c, err := s.caller(r)
	if err == nil {
		err = s.allowed(r, c, askd.RoleAgent)
	}
	var in hookInput
	if err == nil {
		err = readHook(w, r, &in)
		noteHook(r, in.HookEventName)
	}
	var also []askd.Caller // further sessions the Stop hook tells of
	if err == nil && r.Header.Get(SessionHeader) == "" && in.SessionID != "" {
		if err = askd.ValidName("session_id", in.SessionID); err == nil {
			// MCP calls made without Askd-Session ask in the token's own
			// session: the Stop hook of such a setup tells of those too.
			also = append(also, c)
			c.Session = in.SessionID
		}
	}
	if err == nil {
		var out any
		out, err = s.hook(r, c, &in, also)
		if err == nil {
			writeJSON(w, http.StatusOK, out)
			return
		}
	}
	s.writeError(w, r, err)
}

func readHook(w http.ResponseWriter, r *http.Request, in *hookInput) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, askd.MaxBodyBytes))
	if err != nil {
		return askd.Errorf(askd.EINVALID, "body: larger than %d bytes (1 MiB)", askd.MaxBodyBytes)
	}
	// Open: fields askd does not read are ignored. Strict otherwise: a key
	// given twice or text that is not UTF-8 is refused, as on every path.
	return askd.DecodeOpen(data, in)
}

var noop = struct{}{}

func (s *Server) hook(r *http.Request, c askd.Caller, in *hookInput, also []askd.Caller) (any, error) {
	switch {
	case in.HookEventName == "PreToolUse" && in.ToolName == app.AskUserQuestion:
		return s.preToolUseQuestion(r.Context(), c, in)
	case in.HookEventName == "PermissionRequest" && in.ToolName != "" && r.URL.Query().Get("only") == OnlyPolicies:
		return s.permissionRequestCovered(r.Context(), c, in)
	case in.HookEventName == "PermissionRequest" && in.ToolName != "":
		return s.permissionRequest(r.Context(), c, in)
	case in.HookEventName == "Elicitation":
		return s.elicitation(r.Context(), c, in)
	case in.HookEventName == "Stop":
		wait, err := waitParam(r)
		if err != nil {
			return nil, err
		}
		return s.stop(r.Context(), append([]askd.Caller{c}, also...), wait)
	}
	return noop, nil
}

// decide creates the ask for a permission request or a question, waits for
// it to settle (bounded by its deadline) and returns Claude's decision. A
// refused input becomes a deny naming the problem, so the model can fix it.
func (s *Server) decide(ctx context.Context, c askd.Caller, in *hookInput) (app.PermissionDecision, error) {
	pin := &askd.PermissionInput{ToolName: in.ToolName, Input: in.ToolInput, ToolUseID: in.ToolUseID}
	if d, ok := app.AllowOwnTool(pin); ok {
		return d, nil
	}
	ai, err := app.PermissionAsk(pin)
	var a *askd.Ask
	if err == nil {
		a, err = s.app.Create(ctx, c, ai, app.CreateOptions{})
	}
	if code := askd.ErrorCode(err); code == askd.EINVALID || code == askd.ELIMIT {
		return app.PermissionDecision{Behavior: "deny", Message: "askd refused this: " + askd.ErrorMessage(err)}, nil
	} else if err != nil {
		return app.PermissionDecision{}, err
	}
	noteAsk(ctx, a.ID)
	// Claude giving up on the hook (its timeout) cuts the ask off: it stays
	// pending, and its outcome is told at the session's Stop hook.
	settled, err := s.app.AwaitOutcome(ctx, c, app.Wait{Ask: a.ID, Mode: app.AwaitAnswer}, nil)
	if err != nil {
		return app.PermissionDecision{}, hookShutdown(err)
	}
	return s.app.PermissionDecision(settled, in.ToolInput), nil
}

// hookShutdown words a wait's end at shutdown (app.ShutdownError) for a
// Claude Code hook: the hook has no decision to give, and its 503, like any
// error reply, lets Claude Code go on without it (its own prompt decides);
// the ask stays in the inbox. Other errors are returned as they are.
func hookShutdown(err error) error {
	var sd *app.ShutdownError
	if !errors.As(err, &sd) {
		return err
	}
	return askd.Errorf(askd.EUNAVAILABLE, "server shutting down: askd gives no decision for ask %d, so Claude Code goes on without this hook", sd.Ask)
}

func (s *Server) preToolUseQuestion(ctx context.Context, c askd.Caller, in *hookInput) (any, error) {
	d, err := s.decide(ctx, c, in)
	if err != nil {
		return nil, err
	}
	var out preToolUseOutput
	out.HookSpecificOutput.HookEventName = "PreToolUse"
	out.HookSpecificOutput.PermissionDecision = d.Behavior
	if d.Behavior == "allow" {
		out.HookSpecificOutput.UpdatedInput = d.UpdatedInput
	} else {
		out.HookSpecificOutput.PermissionDecisionReason = d.Message
	}
	return out, nil
}

// OnlyPolicies, as /hooks/claude?only=, makes the PermissionRequest hook
// take only the prompts a policy covers (askd hook --only-policies, which
// askd install claude --channel writes): those wait in the inbox for their
// quorum, and Claude Code never shows them in the terminal, where one
// person could allow them alone; every other prompt gets {} and goes on to
// the terminal, and from there through the channel to the inbox
// (internal/app/relay.go).
const OnlyPolicies = "policies"

// permissionRequestCovered is permissionRequest for the prompts a policy
// covers, and {} (no decision) for the others. A prompt whose input askd
// cannot take is decided as permissionRequest decides it (a deny naming
// the problem), never passed on unchecked.
func (s *Server) permissionRequestCovered(ctx context.Context, c askd.Caller, in *hookInput) (any, error) {
	pin := &askd.PermissionInput{ToolName: in.ToolName, Input: in.ToolInput, ToolUseID: in.ToolUseID}
	if _, own := app.AllowOwnTool(pin); !own {
		if ai, err := app.PermissionAsk(pin); err == nil {
			covered, err := s.app.PolicyCovers(ctx, c, ai)
			if err != nil {
				return nil, err
			}
			if !covered {
				return noop, nil
			}
		}
	}
	return s.permissionRequest(ctx, c, in)
}

func (s *Server) permissionRequest(ctx context.Context, c askd.Caller, in *hookInput) (any, error) {
	d, err := s.decide(ctx, c, in)
	if err != nil {
		return nil, err
	}
	var out permissionRequestOutput
	out.HookSpecificOutput.HookEventName = "PermissionRequest"
	out.HookSpecificOutput.Decision = d
	return out, nil
}

// elicitation answers an Elicitation hook: the MCP server's question put to
// a person as a form ask, and their answer, Decline, or a cancel for
// anything else (app.Service.Elicit). Claude Code giving up on the hook
// withdraws the ask.
func (s *Server) elicitation(ctx context.Context, c askd.Caller, in *hookInput) (any, error) {
	res, err := s.app.Elicit(ctx, c, &app.Elicitation{
		Server: in.MCPServerName, Message: in.Message, Mode: in.Mode, Schema: in.RequestedSchema, URL: in.URL,
	})
	if res.Ask != 0 {
		noteAsk(ctx, res.Ask)
	}
	if err != nil {
		return nil, err
	}
	var out elicitationOutput
	out.HookSpecificOutput.HookEventName = "Elicitation"
	out.HookSpecificOutput.Action = res.Action
	if res.Content != nil {
		out.HookSpecificOutput.Content = res.Content
	}
	return out, nil
}

// stop answers a Stop hook: the untold outcomes as the reason to go on
// (app.Service.StopHook), or {} and Claude stops.
func (s *Server) stop(ctx context.Context, sessions []askd.Caller, wait time.Duration) (any, error) {
	text, err := s.app.StopHook(ctx, sessions, wait)
	if err != nil || text == "" {
		return noop, err
	}
	return stopOutput{Decision: "block", Reason: text}, nil
}
