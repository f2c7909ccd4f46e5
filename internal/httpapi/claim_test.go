package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestClaim: a claim is on the ask's JSON, live, and in its history; the
// claimer's claim again changes nothing; another's is 409 with the ask,
// naming who holds it; an approver releases only their own, an admin
// anyone's; answering ends it; a settled ask cannot be claimed or
// released (409 with its state).
func TestClaim(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	alice, bob := cr.people["alice"], cr.people["bob"]
	dave := cr.person(t, "dave", askd.AccessApprover)
	events, err := alice.Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}

	a := cr.decision(t)
	got, err := bob.Claim(ctx, a.ID)
	if err != nil || got.ClaimedBy != "bob" || got.ClaimedAt == nil {
		t.Fatalf("claim = %+v, %v; want claimed by bob", got, err)
	}
	seen := false
	for e := range events { // live to everyone: the inbox's stream
		if e.Event.AskID == a.ID && e.Event.Action == askd.ActionClaimed {
			if e.Type != "ask.updated" || e.Event.Ask.ClaimedBy != "bob" || e.Event.Actor != "bob" {
				t.Errorf("event %s %+v, want ask.updated claimed by bob", e.Type, e.Event)
			}
			seen = true
			break
		}
	}
	if !seen {
		t.Fatal("the event stream ended without the claim")
	}
	again, err := bob.Claim(ctx, a.ID)
	if err != nil || !again.ClaimedAt.Equal(*got.ClaimedAt) {
		t.Errorf("bob's claim again = %+v, %v; want his claim as it was", again, err)
	}

	before := storeState(t, srv)
	_, err = dave.Claim(ctx, a.ID)
	wantStatus(t, err, http.StatusConflict, "claimed by bob")
	if ae := err.(*client.Error); ae.Ask == nil || ae.Ask.ClaimedBy != "bob" {
		t.Errorf("409's ask = %+v, want the ask claimed by bob", ae.Ask)
	}
	_, err = dave.Release(ctx, a.ID)
	wantStatus(t, err, http.StatusForbidden, "claimed by bob: only they or an admin")
	if after := storeState(t, srv); after != before {
		t.Errorf("the store changed on a refusal\nbefore %s\nafter  %s", before, after)
	}

	// An admin releases anyone's; then dave may claim.
	if r, err := alice.Release(ctx, a.ID); err != nil || r.ClaimedBy != "" || r.ClaimedAt != nil {
		t.Fatalf("admin's release = %+v, %v", r, err)
	}
	if _, err := dave.Claim(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	// Another approver may still answer (the first answer wins); the
	// claim ends with it.
	answered, err := bob.Answer(ctx, a.ID, &askd.Answer{Answer: "Friday"})
	if err != nil || answered.ClaimedBy != "" || answered.ClaimedAt != nil || answered.SettledBy != "bob" {
		t.Fatalf("answer over dave's claim = %+v, %v; want settled by bob, claim gone", answered, err)
	}
	for _, act := range []func() (*askd.Ask, error){
		func() (*askd.Ask, error) { return dave.Claim(ctx, a.ID) },
		func() (*askd.Ask, error) { return dave.Release(ctx, a.ID) },
	} {
		_, err := act()
		wantStatus(t, err, http.StatusConflict, "")
		if ae := err.(*client.Error); ae.Ask == nil || ae.Ask.Status != askd.StatusAnswered {
			t.Errorf("409's ask = %+v, want the answered ask", ae.Ask)
		}
	}

	d, err := alice.Show(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, e := range d.History {
		rows = append(rows, e.Action+" by "+e.Actor)
	}
	want := "created by agent-1, claimed by bob, released by alice, claimed by dave, answered by bob"
	if got := strings.Join(rows, ", "); got != want {
		t.Errorf("history %s, want %s", got, want)
	}

	// A body other than {} is refused by name; a bad id by its field.
	b := cr.decision(t)
	if status, body := rawRequest(t, srv, http.MethodPost, fmt.Sprintf("/api/asks/%d/claim", b.ID), srv.HumanToken, `{"for": "bob"}`, nil); status != http.StatusBadRequest || !strings.Contains(body, "for") {
		t.Errorf("claim with a body = %d %s", status, body)
	}
	if status, body := rawRequest(t, srv, http.MethodPost, "/api/asks/x/claim", srv.HumanToken, `{}`, nil); status != http.StatusBadRequest || !strings.Contains(body, "id:") {
		t.Errorf("claim of id x = %d %s", status, body)
	}
	if _, err := bob.Claim(ctx, 1<<40); askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Errorf("claim of no ask: %v, want 404", err)
	}
}

// TestClaimRace: two people claiming one ask at once, many times over, on
// SQLite and PostgreSQL: one wins each time, the other is told who (409
// with the ask), and the history holds one claim.
func TestClaimRace(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		cr := startCrew(t, srv)
		ctx := ctxT(t)
		people := []string{"alice", "bob"}
		for round := range 25 {
			a := cr.decision(t)
			errs := make([]error, len(people))
			start := make(chan struct{})
			done := make(chan int)
			for i, who := range people {
				go func() {
					<-start
					_, errs[i] = cr.people[who].Claim(ctx, a.ID)
					done <- i
				}()
			}
			close(start)
			<-done
			<-done
			var winner, loser int
			switch {
			case errs[0] == nil && errs[1] != nil:
				winner, loser = 0, 1
			case errs[1] == nil && errs[0] != nil:
				winner, loser = 1, 0
			default:
				t.Fatalf("round %d: errors %v, want exactly one claim to win", round, errs)
			}
			wantStatus(t, errs[loser], http.StatusConflict, "claimed by "+people[winner])
			if ae := errs[loser].(*client.Error); ae.Ask == nil || ae.Ask.ClaimedBy != people[winner] {
				t.Fatalf("round %d: the 409's ask %+v, want claimed by %s", round, ae.Ask, people[winner])
			}
			d, err := cr.people["alice"].Show(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			claims := 0
			for _, e := range d.History {
				if e.Action == askd.ActionClaimed {
					claims++
					if e.Actor != people[winner] {
						t.Errorf("round %d: claimed by %s in the history, want %s", round, e.Actor, people[winner])
					}
				}
			}
			if claims != 1 || d.ClaimedBy != people[winner] {
				t.Fatalf("round %d: %d claimed rows, claimed_by %q; want one, %s", round, claims, d.ClaimedBy, people[winner])
			}
		}
	})
}
