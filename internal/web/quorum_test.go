package web_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/chromedp/chromedp"
)

// An approval a policy covers (SPEC §11): each card shows the count live,
// "1 of 2 approvals, by alice", a viewer's read-only card too; the person
// who approved is offered no Approve again; a second person's approval decides it and the card goes.
func TestQuorumCard(t *testing.T) {
	t.Parallel()
	srv := startServer(t, app.Config{})
	person(t, srv, "bob", askd.AccessApprover)
	person(t, srv, "carol", askd.AccessViewer)
	admin := askd.Caller{Name: srv.HumanName, Role: askd.RoleHuman, Access: askd.AccessAdmin}
	if _, err := srv.App.CreatePolicy(context.Background(), admin, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Ship it", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	a := create(t, srv.Agent("ships"), &askd.AskInput{Kind: askd.KindApproval, Title: "Ship it"})
	alice := openInbox(t, srv, "/")
	bob := newTab(t, srv)
	bob.signIn("bob", "/")
	carol := newTab(t, srv) // a viewer reads the count too
	carol.signIn("carol", "/")
	quorum := fmt.Sprintf(`document.querySelector('%s .quorum').textContent`, card(a.ID))
	for _, p := range []*tab{alice, bob, carol} {
		p.waitFor(quorum + ` === '0 of 2 approvals'`)
	}

	alice.do(chromedp.Click(button(a.ID, "Approve")))
	alice.waitFor(quorum + fmt.Sprintf(` === '1 of 2 approvals, by %s: you approved; it waits for someone else'`, srv.HumanName))
	for _, p := range []*tab{bob, carol} {
		p.waitFor(quorum + fmt.Sprintf(` === '1 of 2 approvals, by %s'`, srv.HumanName))
	}
	if !eval[bool](alice, fmt.Sprintf(`document.querySelector('%s button.approve').disabled`, card(a.ID))) {
		t.Error("alice is offered Approve again")
	}
	if got, _ := srv.Human().Show(context.Background(), a.ID); !got.Pending() || len(got.Approvals) != 1 {
		t.Fatalf("after alice's approval: %+v, want pending with one approval", got)
	}

	bob.do(chromedp.Click(button(a.ID, "Approve")))
	alice.waitFor(fmt.Sprintf(`document.querySelector('%s') === null`, card(a.ID)))
	if got, _ := srv.Human().Show(context.Background(), a.ID); got.Status != askd.StatusAnswered || got.SettledBy != "bob" || len(got.Approvals) != 2 {
		t.Errorf("after bob's approval: %+v, want answered by bob with two approvals", got)
	}
}
