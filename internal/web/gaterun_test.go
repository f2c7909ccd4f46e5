package web_test

import (
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// TestGateRunCard: an approval askd gate run makes (SPEC §12) has the
// command it runs as its headline, whatever other fields its payload has
// (here one that comes first), and the full payload to edit.
func TestGateRunCard(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	a := createFor(t, srv, "ci", &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy build 41 to production", ToolName: "gate run",
		Payload: []byte(`{"branch":"main","command":"./deploy.sh production","replicas":3}`)}, 0)
	p := openInbox(t, srv, "/")
	p.waitFor(fmt.Sprintf(`!!document.querySelector('%s .tool-target')`, card(a.ID)))
	if got := p.text(card(a.ID) + " .tool-name"); got != "gate run" {
		t.Errorf("tool %q", got)
	}
	if got := p.text(card(a.ID) + " .tool-target"); got != "./deploy.sh production" {
		t.Errorf("headline %q, want the command", got)
	}
}
