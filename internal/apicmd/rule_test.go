package apicmd

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestRuleCommands: askd rule list and revoke with the person's token from
// ASKD_HUMAN_TOKEN, flags before or after the id; an agent's ASKD_SESSION does
// not narrow the list; an agent token is refused before the server is asked.
func TestRuleCommands(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := t.Context()
	var rules []*askd.Rule
	for _, session := range []string{"s1", "s2", "s3"} {
		a, err := srv.Agent(session).Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Allow Bash: npm test", ToolName: "Bash",
			Payload: json.RawMessage(`{"command":"npm test"}`)}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := srv.Human().CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.MatchPrefix, Prefix: "npm test", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "8h"}})
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	t.Setenv("ASKD_URL", srv.URL)
	t.Setenv("ASKD_TOKEN", srv.AgentToken)
	t.Setenv("ASKD_SESSION", "s1")
	t.Setenv("ASKD_HUMAN_TOKEN", srv.HumanToken)

	out, errOut, err := runCLI(t, "rule", "list")
	if err != nil || strings.Count(out, "Bash: npm test…") != 3 || !strings.Contains(out, "MADE BY") || !strings.Contains(out, srv.HumanName) {
		t.Fatalf("askd rule list: %v %s\n%s\nwant all three rules (ASKD_SESSION is the agent's)", err, errOut, out)
	}
	out, _, err = runCLI(t, "rule", "list", "--session", "s2", "--json", "--agent", srv.AgentName)
	var listed []*askd.Rule
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0].ID != rules[1].ID {
		t.Fatalf("askd rule list --session s2 --json: %v\n%s", err, out)
	}

	// An agent token is refused, and nothing is revoked.
	for _, args := range [][]string{{"rule", "revoke", fmt.Sprint(rules[0].ID), "--token", srv.AgentToken}, {"rule", "list", "--token", srv.AgentToken}} {
		if _, _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), "that is an agent token") || cli.ExitCode(err) != 2 {
			t.Errorf("askd %v: %v (exit %d), want exit 2 refusing the agent token", args, err, cli.ExitCode(err))
		}
	}
	if live, err := srv.Human().Rules(ctx, "", ""); err != nil || len(live) != 3 {
		t.Fatalf("live rules after the refusals: %d, %v; want 3", len(live), err)
	}

	out, errOut, err = runCLI(t, "rule", "revoke", fmt.Sprint(rules[0].ID))
	if err != nil || !strings.Contains(out, fmt.Sprintf("revoked rule %d", rules[0].ID)) {
		t.Fatalf("askd rule revoke: %v %s\n%s", err, errOut, out)
	}
	out, _, err = runCLI(t, "rule", "revoke", "--json", fmt.Sprint(rules[1].ID))
	var revoked askd.Rule
	if err != nil || json.Unmarshal([]byte(out), &revoked) != nil || revoked.RevokedAt == nil || revoked.RevokedBy != srv.HumanName {
		t.Fatalf("askd rule revoke --json ID: %v\n%s", err, out)
	}
	if live, err := srv.Human().Rules(ctx, "", ""); err != nil || len(live) != 1 || live[0].ID != rules[2].ID {
		t.Fatalf("live rules after revoking two: %+v, %v", live, err)
	}
	// Revoking again is the server's refusal (exit 1), naming the rule.
	if _, _, err := runCLI(t, "rule", "revoke", fmt.Sprint(rules[0].ID)); err == nil || cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "was revoked") {
		t.Errorf("askd rule revoke twice: %v (exit %d)", err, cli.ExitCode(err))
	}
	out, _, err = runCLI(t, "rule", "list", "--session", "s1")
	if err != nil || !strings.Contains(out, "no live rules") {
		t.Errorf("askd rule list --session s1 after revoking its rule: %v\n%s", err, out)
	}
}

func TestRuleUsage(t *testing.T) {
	for _, args := range [][]string{{"rule", "-h"}, {"rule", "--help"}, {"rule", "list", "-h"}, {"rule", "revoke", "--help"}} {
		out, errOut, err := runCLI(t, args...)
		if err != nil && !errors.Is(err, flag.ErrHelp) || !strings.Contains(out, "Usage: askd rule") || errOut != "" {
			t.Errorf("askd %v: %v, stdout %q, stderr %q; want the usage on stdout", args, err, out, errOut)
		}
	}
	for _, args := range [][]string{{"rule"}, {"rule", "make"}, {"rule", "revoke"}, {"rule", "revoke", "x"}, {"rule", "revoke", "1", "2"}, {"rule", "list", "extra"}} {
		out, errOut, err := runCLI(t, args...)
		if cli.ExitCode(err) != 2 || out != "" || errOut != "" || strings.Contains(err.Error(), "\n") {
			t.Errorf("askd %v: exit %d, %v, stdout %q, stderr %q; want exit 2 and one line", args, cli.ExitCode(err), err, out, errOut)
		}
	}
}
