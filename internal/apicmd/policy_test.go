package apicmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestPolicyCommands: askd policy add, list and revoke with an admin's
// token; approvals outside 2 to 5 is refused naming approvals, and nothing
// is stored; an ask the policy covers shows its count in askd show.
func TestPolicyCommands(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	t.Setenv("ASKD_URL", srv.URL)
	t.Setenv("ASKD_HUMAN_TOKEN", srv.HumanToken)
	t.Setenv("ASKD_TITLE", "not this one") // no ASKD_* default for what a policy covers

	if _, _, err := runCLI(t, "policy", "add", "--match", "title", "--title", "Ship it", "--approvals", "1"); err == nil || !strings.Contains(err.Error(), "approvals") {
		t.Fatalf("askd policy add --approvals 1: %v; want refused naming approvals", err)
	}
	if ps, err := srv.Human().Policies(t.Context()); err != nil || len(ps) != 0 {
		t.Fatalf("policies after the refusal: %v, %v; want none", ps, err)
	}
	out, errOut, err := runCLI(t, "policy", "add", "--match", "title", "--title", "Ship it", "--approvals", "2", "--exclude-owner", "--json")
	var p askd.Policy
	if err != nil || json.Unmarshal([]byte(out), &p) != nil || p.ID == 0 || p.Title != "Ship it" || p.Approvals != 2 || !p.ExcludeOwner {
		t.Fatalf("askd policy add: %v %s\n%s", err, errOut, out)
	}
	out, _, err = runCLI(t, "policy", "list")
	if err != nil || !strings.Contains(out, `title "Ship it"`) || !strings.Contains(out, "not by its owner") {
		t.Fatalf("askd policy list: %v\n%s", err, out)
	}

	a, err := srv.Agent("s1").Create(t.Context(), &askd.AskInput{Kind: askd.KindApproval, Title: "Ship it"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCLI(t, "show", fmt.Sprint(a.ID))
	if want := "1 of 2 approvals, by " + srv.HumanName; err != nil || !strings.Contains(out, want) {
		t.Fatalf("askd show: %v\n%s\nwant %q", err, out, want)
	}

	out, _, err = runCLI(t, "policy", "revoke", fmt.Sprint(p.ID))
	if err != nil || !strings.Contains(out, fmt.Sprintf("revoked policy %d", p.ID)) {
		t.Fatalf("askd policy revoke: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "policy", "revoke", fmt.Sprint(p.ID)); err == nil || cli.ExitCode(err) != 1 {
		t.Errorf("revoking it again: %v, want exit 1", err)
	}
	out, _, err = runCLI(t, "policy", "list")
	if err != nil || !strings.Contains(out, "no policies") {
		t.Errorf("askd policy list after the revoke: %v\n%s", err, out)
	}
}
