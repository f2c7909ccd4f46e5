package admincmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// A team's inbox (SPEC §10) from the command line: tokens' roles and
// owners, and teams, on a real database file.

// newDB makes a migrated database file and returns its --db arguments.
func newDB(t *testing.T) []string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "askd.db")
	askdCLI(t, "migrate", "--db", db)
	return []string{"--db", db}
}

// dbState is what the refusals below must leave as it was: the tokens and
// the teams, as askd lists them in JSON.
func dbState(t *testing.T, db []string) string {
	t.Helper()
	return askdCLI(t, append([]string{"token", "list", "--json"}, db...)...) +
		askdCLI(t, append([]string{"team", "list", "--json"}, db...)...)
}

// refused runs args, which must fail naming says, with nothing stored.
func refused(t *testing.T, db []string, says string, args ...string) {
	t.Helper()
	before := dbState(t, db)
	_, _, err := runCLI(t, append(args, db...)...)
	if err == nil || !strings.Contains(err.Error(), says) {
		t.Errorf("askd %s: %v, want an error saying %q", strings.Join(args, " "), err, says)
	}
	if after := dbState(t, db); after != before {
		t.Errorf("askd %s changed the database\nbefore %s\nafter  %s", strings.Join(args, " "), before, after)
	}
}

// tokensOf reads token list --json as name → "role/access/owner".
func tokensOf(t *testing.T, db []string) map[string]string {
	t.Helper()
	var ts []map[string]any
	if err := json.Unmarshal([]byte(askdCLI(t, append([]string{"token", "list", "--json"}, db...)...)), &ts); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tok := range ts {
		out[tok["name"].(string)] = fmt.Sprintf("%v/%v/%v", tok["role"], tok["access"], tok["owner"])
	}
	return out
}

// TestTokenRolesAndOwners: token create, list, set-role and set-owner
// round trips on a database file; bad input is an error naming the field,
// and nothing is stored.
func TestTokenRolesAndOwners(t *testing.T) {
	db := newDB(t)
	// --role takes no ASKD_ROLE (askd serve's), --owner no ASKD_OWNER.
	t.Setenv("ASKD_ROLE", "viewer")
	t.Setenv("ASKD_OWNER", "alice")

	var created map[string]string
	out := askdCLI(t, append([]string{"token", "create", "--human", "alice", "--role", "admin", "--json"}, db...)...)
	if err := json.Unmarshal([]byte(out), &created); err != nil || created["access"] != "admin" || created["role"] != "human" || created["name"] != "alice" || !strings.HasPrefix(created["token"], "askd_h_") {
		t.Fatalf("create alice --json: %s (%v)", out, err)
	}
	out = askdCLI(t, append([]string{"token", "create", "--human", "bob"}, db...)...)
	if !strings.Contains(out, `human token "bob", approver`) {
		t.Errorf("create bob said %q; want the default role, approver, named", out)
	}
	askdCLI(t, append([]string{"token", "create", "--human", "carol", "--role", "viewer"}, db...)...)
	askdCLI(t, append([]string{"team", "create", "ops"}, db...)...)
	out = askdCLI(t, append([]string{"token", "create", "--agent", "deployer", "--owner", "team:ops", "--json"}, db...)...)
	if err := json.Unmarshal([]byte(out), &created); err != nil || created["owner"] != "team:ops" || created["role"] != "agent" {
		t.Fatalf("create deployer --json: %s (%v)", out, err)
	}
	askdCLI(t, append([]string{"token", "create", "--agent", "linter", "--owner", "bob"}, db...)...)
	askdCLI(t, append([]string{"token", "create", "--agent", "free"}, db...)...)

	want := map[string]string{
		"alice": "human/admin/<nil>", "bob": "human/approver/<nil>", "carol": "human/viewer/<nil>",
		"deployer": "agent/<nil>/team:ops", "linter": "agent/<nil>/bob", "free": "agent/<nil>/<nil>",
	}
	if got := tokensOf(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("token list --json = %v, want %v", got, want)
	}
	table := askdCLI(t, append([]string{"token", "list"}, db...)...)
	for _, row := range []string{`carol\s+human\s+viewer\s+-\s+20`, `deployer\s+agent\s+-\s+team:ops\s+20`, `free\s+agent\s+-\s+-\s+20`} {
		if !regexpMatch(row, table) {
			t.Errorf("token list:\n%s\nwant a row %s", table, row)
		}
	}

	out = askdCLI(t, append([]string{"token", "set-role", "bob", "--role", "viewer"}, db...)...)
	if !strings.Contains(out, "bob is now a viewer") {
		t.Errorf("set-role said %q", out)
	}
	askdCLI(t, append([]string{"token", "set-role", "carol", "--role", "admin"}, db...)...)
	askdCLI(t, append([]string{"token", "set-owner", "linter", "--owner", "alice"}, db...)...)
	out = askdCLI(t, append([]string{"token", "set-owner", "deployer", "--owner", "", "--json"}, db...)...)
	if strings.TrimSpace(out) != `{"name":"deployer","owner":""}` {
		t.Errorf("set-owner --owner '' --json: %s", out)
	}
	want["bob"], want["carol"], want["linter"], want["deployer"] = "human/viewer/<nil>", "human/admin/<nil>", "agent/<nil>/alice", "agent/<nil>/<nil>"
	if got := tokensOf(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after set-role and set-owner: %v, want %v", got, want)
	}

	for _, tt := range []struct {
		name string
		says string
		args []string
	}{
		{"a bad role", `role: "boss" is not one of admin, approver, viewer`, []string{"token", "create", "--human", "dan", "--role", "boss"}},
		{"a role for an agent", "role: agent tokens have no role", []string{"token", "create", "--agent", "dan", "--role", "viewer"}},
		{"an owner for a person", "owner: only agent tokens have an owner", []string{"token", "create", "--human", "dan", "--owner", "alice"}},
		{"an unknown person as owner", `owner: "zed" is no person`, []string{"token", "create", "--agent", "dan", "--owner", "zed"}},
		{"an agent as owner", `owner: "free" is no person`, []string{"token", "create", "--agent", "dan", "--owner", "free"}},
		{"an unknown team as owner", `owner: no team "nope"`, []string{"token", "create", "--agent", "dan", "--owner", "team:nope"}},
		{"a person named as a team", `name: "team:x" starts with "team:"`, []string{"token", "create", "--human", "team:x"}},
		{"a name in use", `"bob"`, []string{"token", "create", "--agent", "bob"}},
		{"set a bad role", `role: "root" is not one of`, []string{"token", "set-role", "bob", "--role", "root"}},
		{"set the role of an agent", `no human token named "free"`, []string{"token", "set-role", "free", "--role", "admin"}},
		{"set the role of no one", `no human token named "zed"`, []string{"token", "set-role", "zed", "--role", "admin"}},
		{"set no role", "give --role", []string{"token", "set-role", "bob"}},
		{"set the owner of a person", `no agent token named "bob"`, []string{"token", "set-owner", "bob", "--owner", "alice"}},
		{"set an unknown owner", `owner: "zed" is no person`, []string{"token", "set-owner", "free", "--owner", "zed"}},
		{"set an unknown team", `owner: no team "nope"`, []string{"token", "set-owner", "free", "--owner", "team:nope"}},
		{"set no owner flag", "give --owner", []string{"token", "set-owner", "free"}},
		{"set-role without a name", "give the person's NAME", []string{"token", "set-role", "--role", "admin"}},
	} {
		t.Run(tt.name, func(t *testing.T) { refused(t, db, tt.says, tt.args...) })
	}

	// The help shows --role and --owner without a variable.
	for _, c := range [][2]string{{"create", "role"}, {"create", "owner"}, {"set-role", "role"}, {"set-owner", "owner"}} {
		out, _, _ := runCLI(t, "token", c[0], "-h")
		if !strings.Contains(out, "  --"+c[1]+" string\n") || strings.Contains(out, "(ASKD_"+strings.ToUpper(c[1])+")") {
			t.Errorf("token %s -h:\n%s\nwant --%s with no environment variable", c[0], out, c[1])
		}
	}
}

// TestTeamCommands: team create, set, add, remove, list and delete on a
// database file; bad input is an error naming the field or the team, and
// nothing is stored.
func TestTeamCommands(t *testing.T) {
	db := newDB(t)
	for _, p := range []string{"alice", "bob", "carol"} {
		askdCLI(t, append([]string{"token", "create", "--human", p}, db...)...)
	}
	out := askdCLI(t, append([]string{"team", "create", "platform", "--escalate-after", "10m", "--escalate-to", "carol"}, db...)...)
	if !regexpMatch(`platform\s+-\s+after 10m to carol`, out) {
		t.Errorf("team create said:\n%s", out)
	}
	askdCLI(t, append([]string{"team", "create", "ops"}, db...)...)
	askdCLI(t, append([]string{"team", "add", "platform", "bob", "alice", "bob"}, db...)...)
	out = askdCLI(t, append([]string{"team", "set", "ops", "--escalate-after", "90s", "--escalate-to", "team:platform", "--json"}, db...)...)
	var ops askd.Team
	if err := json.Unmarshal([]byte(out), &ops); err != nil || ops.EscalateAfter.Seconds() != 90 || ops.EscalateTo != "team:platform" {
		t.Errorf("team set --json: %s (%v)", out, err)
	}
	out = askdCLI(t, append([]string{"team", "list"}, db...)...)
	for _, row := range []string{`ops\s+-\s+after 1m30s to team:platform`, `platform\s+alice,bob\s+after 10m to carol`} {
		if !regexpMatch(row, out) {
			t.Errorf("team list:\n%s\nwant a row %s", out, row)
		}
	}
	var teams []map[string]any
	if err := json.Unmarshal([]byte(askdCLI(t, append([]string{"team", "list", "--json"}, db...)...)), &teams); err != nil || len(teams) != 2 ||
		teams[1]["escalate_after"] != "10m" || fmt.Sprint(teams[1]["members"]) != "[alice bob]" || fmt.Sprint(teams[0]["members"]) != "[]" {
		t.Errorf("team list --json: %v (%v)", teams, err)
	}

	askdCLI(t, append([]string{"token", "create", "--agent", "deployer", "--owner", "team:ops"}, db...)...)
	for _, tt := range []struct {
		name string
		says string
		args []string
	}{
		{"a name in use", `"platform"`, []string{"team", "create", "platform"}},
		{"an escalation under a second", "escalate_after: 500ms, must be at least 1s", []string{"team", "create", "qa", "--escalate-after", "500ms", "--escalate-to", "bob"}},
		{"half an escalation: no target", "escalate_to: required with escalate_after", []string{"team", "create", "qa", "--escalate-after", "10m"}},
		{"half an escalation: no duration", "escalate_after: required with escalate_to", []string{"team", "create", "qa", "--escalate-to", "bob"}},
		{"an unknown target", `escalate_to: "zed" is no person`, []string{"team", "create", "qa", "--escalate-after", "1m", "--escalate-to", "zed"}},
		{"an unknown target team", `escalate_to: no team "nope"`, []string{"team", "create", "qa", "--escalate-after", "1m", "--escalate-to", "team:nope"}},
		{"not a duration", "--escalate-after", []string{"team", "create", "qa", "--escalate-after", "soon", "--escalate-to", "bob"}},
		{"set one half", "give both --escalate-after", []string{"team", "set", "platform", "--escalate-after", "5m"}},
		{"set under a second", "escalate_after: 1ms, must be at least 1s", []string{"team", "set", "platform", "--escalate-after", "1ms", "--escalate-to", "bob"}},
		{"set an unknown team", `team "nope" not found`, []string{"team", "set", "nope", "--escalate-after", "1m", "--escalate-to", "bob"}},
		{"add an unknown person", `members[1]: "zed" is no person`, []string{"team", "add", "platform", "carol", "zed"}},
		{"add an agent", `members[0]: "deployer" is no person`, []string{"team", "add", "platform", "deployer"}},
		{"add to an unknown team", `team "nope" not found`, []string{"team", "add", "nope", "carol"}},
		{"add no one", "give one or more PERSON", []string{"team", "add", "platform"}},
		{"remove a non-member, all or none", `team "platform" has no member "carol"`, []string{"team", "remove", "platform", "bob", "carol"}},
		{"remove from an unknown team", `team "nope" has no member "bob"`, []string{"team", "remove", "nope", "bob"}},
		{"delete a team that owns an agent", `team "ops" owns agent token "deployer"`, []string{"team", "delete", "ops"}},
		{"delete a team escalated to", `team "ops" escalates to team "platform"`, []string{"team", "delete", "platform"}},
		{"delete an unknown team", `team "nope" not found`, []string{"team", "delete", "nope"}},
		{"members on create", "unexpected argument", []string{"team", "create", "qa", "bob"}},
		{"a bad name", "name:", []string{"team", "create", "bad\tname"}},
	} {
		t.Run(tt.name, func(t *testing.T) { refused(t, db, tt.says, tt.args...) })
	}

	askdCLI(t, append([]string{"team", "remove", "platform", "bob"}, db...)...)
	askdCLI(t, append([]string{"token", "set-owner", "deployer", "--owner", ""}, db...)...)
	askdCLI(t, append([]string{"team", "set", "ops", "--escalate-after", "0", "--escalate-to", ""}, db...)...)
	for _, name := range []string{"ops", "platform"} {
		if out := askdCLI(t, append([]string{"team", "delete", name}, db...)...); !strings.Contains(out, "deleted team") {
			t.Errorf("team delete %s said %q", name, out)
		}
	}
	if out := askdCLI(t, append([]string{"team", "list", "--json"}, db...)...); strings.TrimSpace(out) != "[]" {
		t.Errorf("teams left: %s", out)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
