package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// GET /api/audit: admins page through the whole chain, oldest first, config
// rows with their actor among the asks' events, and the pages verify as one
// chain, on either store; an approver is refused, naming the role.
func TestAuditAPI(t *testing.T) {
	eachStore(t, app.Config{}, testAuditAPI)
}

func testAuditAPI(t *testing.T, s *testserver.Server) {
	ctx := ctxT(t)
	agent := s.Agent("deploy")
	for range 3 {
		if _, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Deployed"}, 0); err != nil {
			t.Fatal(err)
		}
	}
	approver := s.TokenWith(t, app.TokenSpec{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover})
	if _, err := s.App.CreateTeam(ctx, app.LocalAdmin("operator"), app.TeamInput{Name: "ops", Members: []string{"bob"}}); err != nil {
		t.Fatal(err)
	}

	a := toolApproval(t, s.Agent("deploy"), "Bash", bashInput("ls"))
	r, err := s.Human().CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Human().RevokeRule(ctx, r.ID); err != nil {
		t.Fatal(err)
	}

	var all []askd.AuditRow
	cursor := ""
	for range 100 {
		r := fetch(t, s, "/api/audit?limit=2&cursor="+url.QueryEscape(cursor), false)
		if r.status != http.StatusOK {
			t.Fatalf("GET /api/audit: %d %s", r.status, r.body)
		}
		var page struct{ Rows []askd.AuditRow }
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Rows...)
		if cursor = r.header.Get("Askd-Next-Cursor"); cursor == "" {
			break
		}
	}
	if b := askd.VerifyAudit(all, false); b != nil {
		t.Errorf("the pages as one chain: %v", b)
	}
	var actions []string
	for _, r := range all {
		actions = append(actions, r.Action+" by "+r.Actor)
	}
	got := strings.Join(actions, ", ")
	for _, want := range []string{"config.token.created by askd", "created by " + s.AgentName, "config.token.created by askd", "config.team.created by cli:operator",
		"config.rule.created by " + s.HumanName, "config.rule.revoked by " + s.HumanName} {
		if !strings.Contains(got, want) {
			t.Errorf("rows %s: want %q among them", got, want)
		}
	}
	if r := fetchAs(t, s, approver, "/api/audit", false); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "needs the admin role") {
		t.Errorf("an approver's GET /api/audit: %d %s, want 403 naming the admin role", r.status, r.body)
	}
	if r := fetch(t, s, "/api/audit?since=yesterday", false); r.status != 422 && r.status != 400 {
		t.Errorf("since=yesterday: %d %s, want a refusal", r.status, r.body)
	}
}
