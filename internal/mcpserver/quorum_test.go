package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// TestCheckAskShowsQuorum: an approval a policy covers shows, in check_ask,
// how many people must approve it and who has so far; it stays pending
// until the count is full.
func TestCheckAskShowsQuorum(t *testing.T) {
	srv := start(t, app.Config{ApprovalGrace: 100 * time.Millisecond})
	ctx := context.Background()
	admin := askd.Caller{Name: srv.HumanName, Role: askd.RoleHuman, Access: askd.AccessAdmin}
	if _, err := srv.App.CreatePolicy(ctx, admin, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Cut the release", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv, transports[0], "quorum", nil)
	var p approvalOut
	structured(t, call(t, cs, "request_approval", map[string]any{"title": "Cut the release"}), &p)
	if p.Status != "pending" {
		t.Fatalf("request_approval after grace: %+v, want pending", p)
	}
	answer(t, srv, p.ID, &askd.Answer{Decision: askd.DecisionApproved})
	var c struct {
		Status          string          `json:"status"`
		ApprovalsNeeded int             `json:"approvals_needed"`
		Approvals       []askd.Approval `json:"approvals"`
	}
	res := call(t, cs, "check_ask", map[string]any{"id": p.ID})
	structured(t, res, &c)
	if c.Status != "pending" || c.ApprovalsNeeded != 2 || len(c.Approvals) != 1 || c.Approvals[0].By != srv.HumanName {
		t.Fatalf("check_ask after one approval: %s; want pending, 1 of 2 by %s", text(t, res), srv.HumanName)
	}
}
