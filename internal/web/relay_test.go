package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// TestRelayedPrompt: a permission prompt relayed from a Claude Code channel
// says it is open in the terminal too and offers Approve and Reject, no
// edit (Claude Code takes no edited input from a channel); once answered in
// the terminal, Recent says so.
func TestRelayedPrompt(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	c := askd.Caller{Name: srv.AgentName, Role: askd.RoleAgent, Session: "s-relay"}
	a, err := srv.App.RelayPermission(context.Background(), c, &askd.PermissionRelay{
		RequestID: "abcde", ToolName: "Bash", Description: "List the files", InputPreview: `{"command":"ls -la"}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, card(a.ID)))
	if got := visibleButtons(p, a.ID); fmt.Sprint(got) != "[Approve Reject…]" {
		t.Errorf("buttons %q, want Approve and Reject only", got)
	}
	if got := p.text(card(a.ID) + " .subtitle.relayed"); got != "Also open in the Claude Code terminal: the first answer wins." {
		t.Errorf("relayed note %q", got)
	}
	if _, err := srv.App.CloseRelay(context.Background(), c, "abcde", app.RelayAnsweredInTerminal); err != nil {
		t.Fatal(err)
	}
	recent := fmt.Sprintf(`#recent .recent-item[data-id="%d"]`, a.ID)
	p.waitFor(fmt.Sprintf(`document.querySelector('%s') !== null`, recent))
	if got := p.text(recent); !strings.Contains(strings.ToLower(got), "answered in the terminal") {
		t.Errorf("Recent says %q, want answered in the terminal", got)
	}
}
