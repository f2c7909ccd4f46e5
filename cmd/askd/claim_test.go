package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// askdCLI runs the CLI and returns its output, failing the test on an error.
func askdCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), args, nil, &out, &errOut); err != nil {
		t.Fatalf("askd %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// TestClaimAndMine: askd claim, claim --release and list --mine against a
// real server.
func TestClaimAndMine(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	bob := srv.TokenWith(t, app.TokenSpec{Name: "bob", Role: askd.RoleHuman})
	carol := srv.TokenWith(t, app.TokenSpec{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessViewer})
	if _, err := srv.App.CreateTeam(ctx, app.Itself, app.TeamInput{Name: "platform", Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	srv.TokenWith(t, app.TokenSpec{Name: "alices-agent", Role: askd.RoleAgent, Owner: "alice"})
	platform := srv.TokenWith(t, app.TokenSpec{Name: "platform-agent", Role: askd.RoleAgent, Owner: "team:platform"})
	agent := func(token string) []string { return []string{"--url", srv.URL, "--token", token} }
	ask := func(token, title string) string {
		t.Helper()
		out := askdCLI(t, append([]string{"ask", "--kind", "decision", "--title", title, "--option", "yes", "--option", "no", "--json"}, agent(token)...)...)
		var a askd.Ask
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("ask: %s", out)
		}
		return fmt.Sprint(a.ID)
	}
	mineID := ask(platform, "Ship the platform?")
	ask(srv.AgentToken, "Anyone?")

	person := func(token string) []string { return []string{"--url", srv.URL, "--token", token} }
	out := askdCLI(t, append([]string{"list", "--mine", "--status", "pending"}, person(bob)...)...)
	if !strings.Contains(out, "Ship the platform?") || !strings.Contains(out, "Anyone?") {
		t.Errorf("bob's list --mine:\n%s", out)
	}
	out = askdCLI(t, append([]string{"list", "--mine", "--status", "pending"}, person(srv.HumanToken)...)...)
	if strings.Contains(out, "Ship the platform?") || !strings.Contains(out, "Anyone?") {
		t.Errorf("alice's list --mine:\n%s\nwant nobody's ask, not the platform's", out)
	}

	out = askdCLI(t, append([]string{"claim", mineID}, person(bob)...)...)
	if strings.TrimSpace(out) != "ask "+mineID+" is claimed by bob" {
		t.Errorf("claim said %q", out)
	}
	out = askdCLI(t, append([]string{"list", "--status", "pending"}, person(srv.HumanToken)...)...)
	if !regexpMatch(mineID+`\s+pending \(claimed by bob\)`, out) {
		t.Errorf("list after the claim:\n%s", out)
	}
	out = askdCLI(t, append([]string{"show", mineID}, person(srv.HumanToken)...)...)
	if !strings.Contains(out, "  routed to team:platform\n") || !strings.Contains(out, "  claimed by bob\n") || !regexpMatch(`claimed\s+by bob`, out) {
		t.Errorf("show after the claim:\n%s", out)
	}
	if _, _, err := runCLI(t, append([]string{"claim", mineID}, person(srv.HumanToken)...)...); err == nil || !strings.Contains(err.Error(), "claimed by bob") {
		t.Errorf("alice's claim over bob's: %v", err)
	}
	if _, _, err := runCLI(t, append([]string{"claim", mineID}, person(carol)...)...); err == nil || !strings.Contains(err.Error(), "needs the approver role") {
		t.Errorf("a viewer's claim: %v", err)
	}
	out = askdCLI(t, append([]string{"claim", mineID, "--release", "--json"}, person(bob)...)...)
	var released askd.Ask
	if err := json.Unmarshal([]byte(out), &released); err != nil || released.ClaimedBy != "" {
		t.Errorf("release --json: %s", out)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
