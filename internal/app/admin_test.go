package app_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// adminState is what a refused admin action must leave as it was: the
// tokens, the teams and the audit trail, as an admin reads them.
func adminState(t *testing.T, svc *app.Service) string {
	t.Helper()
	ctx := t.Context()
	tokens, err := svc.Tokens(ctx, app.Itself)
	if err != nil {
		t.Fatal(err)
	}
	teams, err := svc.Teams(ctx, app.Itself)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := svc.AuditChain(ctx, app.Itself)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tok := range tokens {
		fmt.Fprintf(&b, "token %s %s %s %s\n", tok.Name, tok.Role, tok.Access, tok.Owner)
	}
	for _, tm := range teams {
		fmt.Fprintf(&b, "team %s %v %s %s\n", tm.Name, tm.Members, tm.EscalateAfter, tm.EscalateTo)
	}
	fmt.Fprintf(&b, "%d audit rows", len(rows))
	return b.String()
}

// TestAdminActionsNeedAnAdmin: every admin action, whichever front end
// calls it, refuses an approver, a viewer and an agent (EFORBIDDEN) and
// stores nothing then; the command line's local admin and askd itself may.
func TestAdminActionsNeedAnAdmin(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := t.Context()
	for _, spec := range []app.TokenSpec{{Name: "bob", Role: askd.RoleHuman}, {Name: "robot", Role: askd.RoleAgent}} {
		if _, _, err := svc.CreateToken(ctx, app.Itself, spec); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateTeam(ctx, app.Itself, app.TeamInput{Name: "ops", Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}
	actions := []struct {
		name string
		do   func(c askd.Caller) error
	}{
		{"create a token", func(c askd.Caller) error {
			_, _, err := svc.CreateToken(ctx, c, app.TokenSpec{Name: "eve", Role: askd.RoleHuman, Access: askd.AccessAdmin})
			return err
		}},
		{"list tokens", func(c askd.Caller) error { _, err := svc.Tokens(ctx, c); return err }},
		{"set a role", func(c askd.Caller) error { return svc.SetAccess(ctx, c, "bob", askd.AccessAdmin) }},
		{"set an owner", func(c askd.Caller) error { return svc.SetOwner(ctx, c, "robot", "bob") }},
		{"revoke a token", func(c askd.Caller) error { return svc.RevokeToken(ctx, c, "robot") }},
		{"make a sign-in link", func(c askd.Caller) error { _, _, err := svc.CreateSignInCode(ctx, c, "bob"); return err }},
		{"read the audit trail", func(c askd.Caller) error { _, err := svc.AuditChain(ctx, c); return err }},
		{"list teams", func(c askd.Caller) error { _, err := svc.Teams(ctx, c); return err }},
		{"create a team", func(c askd.Caller) error {
			_, err := svc.CreateTeam(ctx, c, app.TeamInput{Name: "qa"})
			return err
		}},
		{"set an escalation", func(c askd.Caller) error {
			_, err := svc.SetEscalation(ctx, c, "ops", time.Minute, "bob")
			return err
		}},
		{"add a member", func(c askd.Caller) error { _, err := svc.AddMembers(ctx, c, "ops", []string{"bob"}); return err }},
		{"remove a member", func(c askd.Caller) error { _, err := svc.RemoveMembers(ctx, c, "ops", "bob"); return err }},
		{"delete a team", func(c askd.Caller) error { return svc.DeleteTeam(ctx, c, "ops") }},
		{"create a policy", func(c askd.Caller) error {
			_, err := svc.CreatePolicy(ctx, c, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Ship", Approvals: 2})
			return err
		}},
	}
	refused := []askd.Caller{
		{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover},
		{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessViewer},
		{Name: "robot", Role: askd.RoleAgent, Session: "s1"},
	}
	before := adminState(t, svc)
	for _, a := range actions {
		for _, c := range refused {
			t.Run(fmt.Sprintf("%s by a %s %s", a.name, c.Role, c.Access), func(t *testing.T) {
				if err := a.do(c); askd.ErrorCode(err) != askd.EFORBIDDEN {
					t.Errorf("%v, want EFORBIDDEN", err)
				}
			})
		}
	}
	if after := adminState(t, svc); after != before {
		t.Errorf("refused actions changed what admins see\nbefore %s\nafter  %s", before, after)
	}
	for _, c := range []askd.Caller{app.LocalAdmin("operator"), app.Itself, {Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin}} {
		if _, err := svc.Tokens(ctx, c); err != nil {
			t.Errorf("%s lists tokens: %v", c.Name, err)
		}
	}
}

// TestAdminChangesRecordTheirCaller: each change of configuration is a row
// of the audit chain whose actor is the caller: the command line's local
// admin as cli:<user>, a person by name, askd's first start as askd.
func TestAdminChangesRecordTheirCaller(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := t.Context()
	human, _, err := app.Bootstrap(ctx, svc.Store())
	if err != nil || human == "" {
		t.Fatalf("Bootstrap: %q, %v", human, err)
	}
	cli := app.LocalAdmin("operator")
	if cli.Name != "cli:operator" || cli.Needs(askd.AccessAdmin) != nil {
		t.Fatalf("LocalAdmin = %+v, want the admin cli:operator", cli)
	}
	carol := askd.Caller{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin}
	steps := []func() error{
		func() error {
			_, _, err := svc.CreateToken(ctx, cli, app.TokenSpec{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin})
			return err
		},
		func() error {
			_, err := svc.CreateTeam(ctx, carol, app.TeamInput{Name: "ops", Members: []string{"carol"}})
			return err
		},
		func() error { return svc.SetOwner(ctx, cli, "agent", "team:ops") },
		func() error { _, err := svc.RemoveMembers(ctx, carol, "ops", "carol"); return err },
		func() error { return svc.SetAccess(ctx, cli, "carol", askd.AccessViewer) },
		func() error { return svc.RevokeToken(ctx, app.LocalAdmin("root"), "agent") },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	rows, err := svc.AuditChain(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Action+" by "+r.Actor)
	}
	want := []string{
		askd.ConfigTokenCreated + " by askd", askd.ConfigTokenCreated + " by askd",
		askd.ConfigTokenCreated + " by cli:operator", askd.ConfigTeamCreated + " by carol",
		askd.ConfigTokenOwner + " by cli:operator", askd.ConfigTeamMembers + " by carol",
		askd.ConfigTokenRole + " by cli:operator", askd.ConfigTokenRevoked + " by cli:root",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b := askd.VerifyAudit(rows, false); b != nil {
		t.Errorf("the chain: %v", b)
	}
}

// TestAdminRefusals: what an admin action refuses, the same for the API and
// the command line, storing nothing: a token's role and owner that do not
// fit, an owner or member who is nobody, a team add without people, a
// sign-in link for no one or an agent.
func TestAdminRefusals(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := t.Context()
	as := app.LocalAdmin("operator")
	if _, _, err := svc.CreateSignInCode(ctx, as, ""); askd.ErrorCode(err) != askd.EINVALID {
		t.Errorf("a sign-in link with no human token: %v, want EINVALID", err)
	}
	for _, spec := range []app.TokenSpec{{Name: "bob", Role: askd.RoleHuman}, {Name: "robot", Role: askd.RoleAgent}} {
		if _, _, err := svc.CreateToken(ctx, as, spec); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateTeam(ctx, as, app.TeamInput{Name: "ops"}); err != nil {
		t.Fatal(err)
	}
	token := func(spec app.TokenSpec) func() error {
		return func() error { _, _, err := svc.CreateToken(ctx, as, spec); return err }
	}
	tests := []struct {
		name string
		do   func() error
		code string
		says string
	}{
		{"a bad role", token(app.TokenSpec{Name: "dan", Role: askd.RoleHuman, Access: "boss"}), askd.EINVALID, `role: "boss" is not one of admin, approver, viewer`},
		{"a role for an agent", token(app.TokenSpec{Name: "dan", Role: askd.RoleAgent, Access: askd.AccessViewer}), askd.EINVALID, "role: agent tokens have no role"},
		{"an owner for a person", token(app.TokenSpec{Name: "dan", Role: askd.RoleHuman, Owner: "bob"}), askd.EINVALID, "owner: only agent tokens have an owner"},
		{"an agent as owner", token(app.TokenSpec{Name: "dan", Role: askd.RoleAgent, Owner: "robot"}), askd.EINVALID, `owner: "robot" is no person`},
		{"an unknown team as owner", token(app.TokenSpec{Name: "dan", Role: askd.RoleAgent, Owner: "team:nope"}), askd.EINVALID, `owner: no team "nope"`},
		{"a person named as a team", token(app.TokenSpec{Name: "team:x", Role: askd.RoleHuman}), askd.EINVALID, `name: "team:x" starts with "team:"`},
		{"a name in use", token(app.TokenSpec{Name: "bob", Role: askd.RoleAgent}), askd.ECONFLICT, `"bob"`},
		{"the role of an agent", func() error { return svc.SetAccess(ctx, as, "robot", askd.AccessAdmin) }, askd.ENOTFOUND, `no human token named "robot"`},
		{"the owner of a person", func() error { return svc.SetOwner(ctx, as, "bob", "") }, askd.ENOTFOUND, `no agent token named "bob"`},
		{"revoke no one", func() error { return svc.RevokeToken(ctx, as, "zed") }, askd.ENOTFOUND, "zed"},
		{"add no one", func() error { _, err := svc.AddMembers(ctx, as, "ops", nil); return err }, askd.EINVALID, "people: required"},
		{"add an agent", func() error { _, err := svc.AddMembers(ctx, as, "ops", []string{"robot"}); return err }, askd.EINVALID, `members[0]: "robot" is no person`},
		{"a sign-in link for an agent", func() error { _, _, err := svc.CreateSignInCode(ctx, as, "robot"); return err }, askd.EINVALID, "agent token"},
		{"a sign-in link for no one", func() error { _, _, err := svc.CreateSignInCode(ctx, as, "zed"); return err }, askd.ENOTFOUND, "zed"},
	}
	before := adminState(t, svc)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if askd.ErrorCode(err) != tt.code || !strings.Contains(askd.ErrorMessage(err), tt.says) {
				t.Errorf("%v (%s), want %s saying %q", err, askd.ErrorCode(err), tt.code, tt.says)
			}
		})
	}
	if after := adminState(t, svc); after != before {
		t.Errorf("refusals changed what admins see\nbefore %s\nafter  %s", before, after)
	}
}
