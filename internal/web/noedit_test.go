package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// TestNoEditApproval: an approval whose agent cannot run an edited call
// (no_edit: Copilot's, Qwen's and Gemini's hooks, SPEC §18) offers Approve
// and Reject, no Edit, and says why.
func TestNoEditApproval(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	c := askd.Caller{Name: srv.AgentName, Role: askd.RoleAgent, Session: "s-gemini"}
	a, err := srv.App.Create(context.Background(), c, &askd.AskInput{
		Kind: askd.KindApproval, Title: "Allow Bash: make deploy", ToolName: "Bash", Payload: json.RawMessage(`{"command":"make deploy"}`),
	}, app.CreateOptions{AgentTool: "run_shell_command", NoEdit: true})
	if err != nil {
		t.Fatal(err)
	}
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, card(a.ID)))
	if got := visibleButtons(p, a.ID); fmt.Sprint(got) != "[Approve Reject…]" {
		t.Errorf("buttons %q, want Approve and Reject only", got)
	}
	if got := p.text(card(a.ID) + " .subtitle.no-edit"); got != "This agent cannot run an edited call: approve or reject it as it is." {
		t.Errorf("no-edit note %q", got)
	}
}
