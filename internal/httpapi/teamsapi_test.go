package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestTeamsAPI: an admin's team API as SPEC §10 lists it, durations as
// strings; each refusal names its field (or the team), and stores nothing.
func TestTeamsAPI(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	alice := cr.people["alice"]
	tok := srv.HumanToken

	status, body := rawRequest(t, srv, http.MethodPost, "/api/teams", tok, `{"name": "platform", "members": ["carol", "bob", "bob"], "escalate_after": "10m", "escalate_to": "alice"}`, nil)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var created map[string]any
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(created["members"]) != "[bob carol]" || created["escalate_after"] != "10m" || created["escalate_to"] != "alice" || created["name"] != "platform" {
		t.Errorf("created %s", body)
	}
	// A team of one that escalates to a team, and to itself.
	if _, err := alice.CreateTeam(ctx, "ops", nil, 90*time.Second, "team:ops"); err != nil {
		t.Fatal(err)
	}
	teams, err := alice.Teams(ctx)
	if err != nil || len(teams) != 2 || teams[0].Name != "ops" || teams[0].EscalateAfter != 90*time.Second || len(teams[0].Members) != 0 || teams[1].Name != "platform" {
		t.Fatalf("teams = %+v, %v", teams, err)
	}

	// An agent of platform's, and a team escalating to ops.
	cr.agent(t, "plat-agent", "team:platform")
	if _, err := alice.CreateTeam(ctx, "qa", []string{"dave"}, time.Minute, "team:ops"); err == nil {
		t.Fatal("qa with an unknown member dave: no error")
	}
	if _, err := alice.CreateTeam(ctx, "qa", nil, time.Minute, "team:ops"); err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"a name in use", "POST", "/api/teams", `{"name": "platform"}`, 409, "platform"},
		{"no name", "POST", "/api/teams", `{}`, 400, "name:"},
		{"a bad name", "POST", "/api/teams", `{"name": "-x"}`, 400, "name:"},
		{"an unknown member", "POST", "/api/teams", `{"name": "new", "members": ["bob", "zed"]}`, 400, `members[1]: "zed" is no person (a human token's name)`},
		{"an agent as member", "POST", "/api/teams", `{"name": "new", "members": ["agent-1"]}`, 400, `members[0]: "agent-1" is no person`},
		{"not a duration", "POST", "/api/teams", `{"name": "new", "escalate_after": "soon", "escalate_to": "bob"}`, 400, "escalate_after:"},
		{"under a second", "POST", "/api/teams", `{"name": "new", "escalate_after": "500ms", "escalate_to": "bob"}`, 400, "escalate_after: 500ms, must be at least 1s"},
		{"negative", "POST", "/api/teams", `{"name": "new", "escalate_after": "-1m", "escalate_to": "bob"}`, 400, "escalate_after:"},
		{"a duration without a target", "POST", "/api/teams", `{"name": "new", "escalate_after": "1m"}`, 400, "escalate_to: required"},
		{"a target without a duration", "POST", "/api/teams", `{"name": "new", "escalate_to": "bob"}`, 400, "escalate_after: required"},
		{"an unknown target person", "POST", "/api/teams", `{"name": "new", "escalate_after": "1m", "escalate_to": "zed"}`, 400, `escalate_to: "zed" is no person`},
		{"an unknown target team", "POST", "/api/teams", `{"name": "new", "escalate_after": "1m", "escalate_to": "team:nope"}`, 400, `escalate_to: no team "nope"`},
		{"a number as duration", "POST", "/api/teams", `{"name": "new", "escalate_after": 600, "escalate_to": "bob"}`, 400, "escalate_after"},
		{"an unknown field", "POST", "/api/teams", `{"name": "new", "owner": "bob"}`, 400, "owner"},
		{"patch under a second", "PATCH", "/api/teams/platform", `{"escalate_after": "1ms", "escalate_to": "bob"}`, 400, "escalate_after:"},
		{"patch half", "PATCH", "/api/teams/platform", `{"escalate_after": "20m"}`, 400, "escalate_to: required"},
		{"patch members", "PATCH", "/api/teams/platform", `{"members": ["bob"]}`, 400, "members"},
		{"patch an unknown team", "PATCH", "/api/teams/nope", `{"escalate_after": "1m", "escalate_to": "bob"}`, 404, "nope"},
		{"add nobody", "POST", "/api/teams/platform/members", `{"people": []}`, 400, "people: required"},
		{"add an unknown person", "POST", "/api/teams/platform/members", `{"people": ["alice", "zed"]}`, 400, `members[1]: "zed"`},
		{"add to an unknown team", "POST", "/api/teams/nope/members", `{"people": ["alice"]}`, 404, "nope"},
		{"remove a non-member", "DELETE", "/api/teams/platform/members/alice", ``, 404, "alice"},
		{"remove from an unknown team", "DELETE", "/api/teams/nope/members/bob", ``, 404, "nope"},
		{"delete an unknown team", "DELETE", "/api/teams/nope", ``, 404, "nope"},
		{"delete a team that owns an agent", "DELETE", "/api/teams/platform", ``, 400, `team "platform" owns agent token "plat-agent"`},
		{"delete a team escalated to", "DELETE", "/api/teams/ops", ``, 400, `team "qa" escalates to team "ops"`},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			before := storeState(t, srv)
			status, body := rawRequest(t, srv, tt.method, tt.path, tok, tt.body, nil)
			var e httpapi.ErrorBody
			if err := json.Unmarshal([]byte(body), &e); err != nil || status != tt.status || !strings.Contains(e.Error, tt.says) {
				t.Errorf("%s %s %s = %d %s, want %d saying %q", tt.method, tt.path, tt.body, status, body, tt.status, tt.says)
			}
			if after := storeState(t, srv); after != before {
				t.Errorf("the store changed\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	// Changes that succeed.
	team, err := alice.SetEscalation(ctx, "platform", time.Hour+30*time.Minute, "team:ops")
	if err != nil || team.EscalateAfter != 90*time.Minute || team.EscalateTo != "team:ops" {
		t.Fatalf("patch = %+v, %v", team, err)
	}
	if status, body := rawRequest(t, srv, "PATCH", "/api/teams/platform", tok, `{"escalate_after": "1h30m0s", "escalate_to": "team:ops"}`, nil); status != 200 || !strings.Contains(body, `"escalate_after":"1h30m"`) {
		t.Errorf("patch reply %d %s", status, body)
	}
	if team, err = alice.SetEscalation(ctx, "platform", 0, ""); err != nil || team.EscalateAfter != 0 || team.EscalateTo != "" {
		t.Fatalf("escalation off = %+v, %v", team, err)
	}
	if team, err = alice.AddMembers(ctx, "platform", "alice", "bob"); err != nil || fmt.Sprint(team.Members) != "[alice bob carol]" {
		t.Fatalf("add = %+v, %v", team, err)
	}
	if team, err = alice.RemoveMember(ctx, "platform", "carol"); err != nil || fmt.Sprint(team.Members) != "[alice bob]" {
		t.Fatalf("remove = %+v, %v", team, err)
	}
	// Escalating to ops, qa kept ops; once qa is gone, ops may go (its
	// escalation to itself does not hold it).
	for _, name := range []string{"qa", "ops"} {
		if err := alice.DeleteTeam(ctx, name); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	if teams, err := alice.Teams(ctx); err != nil || len(teams) != 1 || teams[0].Name != "platform" {
		t.Errorf("teams after deleting qa and ops = %d, %v", len(teams), err)
	}
}
