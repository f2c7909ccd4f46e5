package askd

import "strings"

// PermissionRelay is a tool-permission prompt that Claude Code relays to a
// channel (its notification notifications/claude/channel/permission_request,
// which the askd mcp --channel bridge passes on): the prompt is open in the
// terminal too, and whichever answer comes first wins. Claude Code takes
// only allow or deny back, never an edited input.
type PermissionRelay struct {
	// RequestID is Claude Code's id of the prompt: five lowercase letters,
	// made from the tool use, so the same prompt relayed again has the same.
	RequestID   string `json:"request_id"`
	ToolName    string `json:"tool_name"`
	Description string `json:"description"`
	// InputPreview is the tool's input as JSON, cut at 200 characters.
	InputPreview string `json:"input_preview"`
}

// Limits of relayed permission prompts. Claude Code sends a preview of 200
// characters and an ellipsis; the limit leaves room for a version that
// sends more.
const (
	RelayRequestIDChars  = 5
	MaxInputPreviewChars = 2000
	MaxRelayDescChars    = 4000 // a tool's own words on what the call does
)

// RelayToolUsePrefix starts the tool_use_id of a relayed prompt's ask:
// "channel:" and the request id. Like a permission prompt's tool use id, it
// makes the same prompt relayed again attach to the same ask.
const RelayToolUsePrefix = "channel:"

// RelayRequestID returns the request id of a relayed prompt's ask, and
// whether a is one.
func (a *Ask) RelayRequestID() (string, bool) {
	if a.Kind != KindApproval || !strings.HasPrefix(a.ToolUseID, RelayToolUsePrefix) {
		return "", false
	}
	return strings.TrimPrefix(a.ToolUseID, RelayToolUsePrefix), true
}

// Validate checks a relayed prompt: request_id five lowercase letters, as
// Claude Code makes them; tool_name required; description and
// input_preview text of bounded size. Errors are EINVALID naming the field.
func (in *PermissionRelay) Validate() error {
	var p problems
	p.requestID("request_id", in.RequestID)
	p.ident("tool_name", in.ToolName, 1, MaxToolNameChars, "tool names")
	p.text("description", in.Description, 0, MaxRelayDescChars)
	p.text("input_preview", in.InputPreview, 0, MaxInputPreviewChars)
	return p.err()
}

// requestID checks a relayed prompt's request id.
func (p *problems) requestID(path, id string) {
	ok := len(id) == RelayRequestIDChars
	for i := 0; ok && i < len(id); i++ {
		ok = id[i] >= 'a' && id[i] <= 'z'
	}
	if !ok {
		p.add(path, "%q is not %d lowercase letters (a to z), as Claude Code makes request ids", clipValue(id), RelayRequestIDChars)
	}
}

// ChannelTell is a told text (SPEC §5) leased to a channel bridge, which
// pushes it into the running Claude Code session and then reports it told.
type ChannelTell struct {
	Key   string `json:"key"` // the tell delivery's key: what the bridge reports told
	AskID int64  `json:"ask_id"`
	Kind  Kind   `json:"kind"`
	// Outcome is how the ask settled: approved, modified or rejected for an
	// answered approval, answered for any other answered ask, else its
	// cancel reason (dismissed, timeout, withdrawn, replaced).
	Outcome string `json:"outcome"`
	Text    string `json:"text"` // the told text, as the Stop hook gives it
}

// ChannelOutcome is how settled ask a ended, in the one word a channel
// notification's meta carries (see ChannelTell.Outcome).
func (a *Ask) ChannelOutcome() string {
	if a.Status == StatusAnswered && a.Kind == KindApproval && a.Answer != nil && a.Answer.Decision != "" {
		return a.Answer.Decision
	}
	return string(a.Outcome())
}
