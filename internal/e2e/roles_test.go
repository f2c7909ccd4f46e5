package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestRolesOnSQLite: the real binary on a SQLite file, tokens made with the
// CLI. A viewer's answer and claim, and an approver's policy, are refused
// naming the role, and the ask (or the policy list) reads back unchanged; an
// approver decides; a role changed with the CLI on the database reaches the
// running server, both ways.
func TestRolesOnSQLite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "askd.db")
	askdCLI(t, db, "migrate")
	secret := map[string]string{}
	for _, p := range []struct{ name, role string }{{"carol", "admin"}, {"dave", "approver"}, {"erin", "viewer"}} {
		secret[p.name] = secretOf(t, askdCLI(t, db, "token", "create", "--human", p.name, "--role", p.role, "--json"))
	}
	agentTok := secretOf(t, askdCLI(t, db, "token", "create", "--agent", "deployer", "--json"))
	srv := serve(t, "all", "all", db)
	ctx := t.Context()
	person := func(name string) *client.Client { return client.New(srv.URL, secret[name]) }
	asker := client.New(srv.URL, agentTok)
	asker.Session = "deploys"
	ask := func(title string) *askd.Ask {
		t.Helper()
		a, err := asker.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: title}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	unchanged := func(id int64, after string) {
		t.Helper()
		got, err := person("carol").Show(ctx, id)
		if err != nil || !got.Pending() || got.Answer != nil || got.ClaimedBy != "" || len(got.History) != 1 {
			t.Fatalf("ask %d after %s: %+v, %v; want it pending, untouched", id, after, got, err)
		}
	}
	refused := func(err error, role, what string) {
		t.Helper()
		if askd.ErrorCode(err) != askd.EFORBIDDEN || !strings.Contains(err.Error(), "needs the "+role+" role") {
			t.Fatalf("%s: %v; want forbidden, naming the %s role", what, err, role)
		}
	}

	a := ask("Run the migration")
	_, err := person("erin").Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	refused(err, "approver", "a viewer's answer")
	unchanged(a.ID, "a viewer's answer")
	_, err = person("erin").Claim(ctx, a.ID)
	refused(err, "approver", "a viewer's claim")
	unchanged(a.ID, "a viewer's claim")

	_, err = person("dave").CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Run the migration", Approvals: 2})
	refused(err, "admin", "an approver's policy")
	if ps, err := person("carol").Policies(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("policies after an approver's attempt: %+v, %v; want none", ps, err)
	}

	done, err := person("dave").Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if err != nil || done.Status != askd.StatusAnswered || done.SettledBy != "dave" {
		t.Fatalf("the approver's answer: %+v, %v", done, err)
	}

	// Roles changed on the database while the server runs: erin up, dave down.
	// A change reaches a running server within seconds (SPEC §10): each
	// person's /api/me says when it has.
	askdCLI(t, db, "token", "set-role", "erin", "--role", "approver")
	askdCLI(t, db, "token", "set-role", "dave", "--role", "viewer")
	for name, access := range map[string]string{"dave": "viewer", "erin": "approver"} {
		testserver.Eventually(t, name+" as "+access+" on the running server", func() bool {
			me, err := person(name).Me(ctx)
			return err == nil && me["access"] == access
		})
	}
	b := ask("Drop the old index")
	_, err = person("dave").Answer(ctx, b.ID, &askd.Answer{Decision: askd.DecisionApproved})
	refused(err, "approver", "the demoted approver's answer")
	unchanged(b.ID, "the demoted approver's answer")
	if _, err := person("erin").Answer(ctx, b.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "not now"}); err != nil {
		t.Fatalf("the promoted viewer's answer: %v", err)
	}
	got, err := person("carol").Show(ctx, b.ID)
	if err != nil || got.SettledBy != "erin" || got.Answer.Decision != askd.DecisionRejected {
		t.Fatalf("after erin's promotion: %+v, %v; want rejected by erin", got, err)
	}
}
