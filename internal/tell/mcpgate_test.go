package tell_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// Notifications of an approval an MCP gate asks (SPEC §14: a source, the
// server's name, and tool_name mcp__NAME__TOOL), read on every channel as
// its receiver reads them: each channel's headline names the server it came
// through, "askd: approval from s-gate through filesystem", the server once
// when the session is named after it (a gate's session is, unless
// ASKD_SESSION names another); the webhook carries it as source; Allow and
// Deny are its buttons, as any permission prompt's. A server's name that
// tries to be more than text (a URL, Slack's syntax, a bidi control) is
// shown as text: defanged, escaped, the control dropped.
func TestApprovalThroughAGate(t *testing.T) {
	c := startChannels(t)
	tests := []struct {
		name, session, source string
		headline              string // as every channel shows it
	}{
		{name: "a gate's own session", session: "s-gate", source: "filesystem",
			headline: "askd: approval from s-gate through filesystem"},
		{name: "the session named after the server", session: "filesystem", source: "filesystem",
			headline: "askd: approval through filesystem"},
		{name: "a server's name that is more than text", session: "s-evil", source: "files.evil.example <!channel> *x* \u202eend",
			headline: "askd: approval from s-evil through files[.]evil[.]example <!channel> *x* end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := c.Agent(tt.session).Create(t.Context(), &askd.AskInput{Kind: askd.KindApproval,
				Title: "Allow mcp__filesystem__write_file: notes/todo.md", ToolName: "mcp__filesystem__write_file", Source: tt.source,
				Payload: json.RawMessage(`{"path":"notes/todo.md","content":"# To do"}`)}, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := c.notesOf(t, a.ID)
			if n.ntfy.Title != tt.headline || n.push.Title != tt.headline {
				t.Errorf("titles: ntfy %q, push %q; want %q", n.ntfy.Title, n.push.Title, tt.headline)
			}
			if shown := strings.Join(n.slack.Texts, "\n"); !strings.Contains(shown, "*"+tt.headline+"*") {
				t.Errorf("Slack shows %q, not the headline %q", shown, tt.headline)
			}
			if n.webhook["kind"] != "approval" || n.webhook["source"] != tt.source {
				t.Errorf("webhook kind %v, source %q; want approval, %q", n.webhook["kind"], n.webhook["source"], tt.source)
			}
			want := []string{askd.TapAllow, askd.TapDeny}
			if ntfy, slack, push := n.labels(); !slices.Equal(ntfy, want) || !slices.Equal(slack, want) || !slices.Equal(push, want) {
				t.Errorf("buttons: ntfy %q, Slack %q, push %q; want %q", ntfy, slack, push, want)
			}
		})
	}
}
