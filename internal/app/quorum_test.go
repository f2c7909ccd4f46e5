package app_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// Approvals of one ask from two processes on one PostgreSQL at the same
// instant count once each (the ask is read locked in the settle
// transaction); the last approval racing a rejection from the other
// process ends in exactly one decision and one answered row.
func TestQuorumAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	st1, st2 := testserver.OpenPostgres(t, url), testserver.OpenPostgres(t, url)
	secret := teamFixture(t, st1)
	ctx := t.Context()
	p1, p2 := app.New(st1, app.Config{}), app.New(st2, app.Config{})
	if _, _, err := p1.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "erin", Role: askd.RoleHuman}); err != nil {
		t.Fatal(err)
	}
	carol := askd.Caller{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin}
	dave := askd.Caller{Name: "dave", Role: askd.RoleHuman, Access: askd.AccessApprover}
	erin := askd.Caller{Name: "erin", Role: askd.RoleHuman, Access: askd.AccessApprover}
	if _, err := p1.CreatePolicy(ctx, carol, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Ship", Approvals: 3}); err != nil {
		t.Fatal(err)
	}
	agent, err := p1.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	type act struct {
		svc *app.Service
		who askd.Caller
		ans *askd.Answer
	}
	atOnce := func(id int64, acts ...act) []error {
		errs := make([]error, len(acts))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, a := range acts {
			wg.Go(func() {
				<-start
				_, errs[i] = a.svc.Answer(ctx, a.who, id, a.ans)
			})
		}
		close(start)
		wg.Wait()
		return errs
	}
	approve, reject := &askd.Answer{Decision: askd.DecisionApproved}, &askd.Answer{Decision: askd.DecisionRejected}
	for round := range 15 {
		agent.Session = fmt.Sprintf("ship-%d", round)
		a, err := p1.Create(ctx, agent, &askd.AskInput{Kind: askd.KindApproval, Title: "Ship"}, app.CreateOptions{})
		if err != nil || a.ApprovalsNeeded != 3 {
			t.Fatalf("round %d: %+v, %v; want 3 approvals needed", round, a, err)
		}
		if errs := atOnce(a.ID, act{p1, carol, approve}, act{p2, dave, approve}); errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: two approvals at once on two processes: %v", round, errs)
		}
		got, err := p2.Get(ctx, carol, a.ID)
		if err != nil || !got.Pending() || len(got.Approvals) != 2 {
			t.Fatalf("round %d: after two approvals at once: %+v, %v; want pending, 2 of 3", round, got, err)
		}
		errs := atOnce(a.ID, act{p1, erin, approve}, act{p2, dave, reject})
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: the last approval and a rejection at once: %v; want exactly one to decide", round, errs)
		}
		want := askd.DecisionApproved
		if errs[1] == nil {
			want = askd.DecisionRejected
		}
		got, err = p1.Get(ctx, carol, a.ID)
		if err != nil || got.Status != askd.StatusAnswered || got.Answer.Decision != want {
			t.Fatalf("round %d: %+v, %v; want answered %s", round, got, err, want)
		}
		evs, err := p2.History(ctx, carol, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		answered, parts := 0, 0
		for _, e := range evs {
			switch e.Action {
			case askd.ActionAnswered:
				answered++
			case askd.ActionApprovedInPart:
				parts++
			}
		}
		if answered != 1 || parts != 2 {
			t.Fatalf("round %d: %d answered and %d approved_in_part rows; want 1 and 2", round, answered, parts)
		}
	}
}

// BenchmarkQuorumApproval measures, on SQLite in one process, an approval
// from its creation to its decision: answered by one person (no policy), or
// by two under a policy of two approvals (one more settle transaction,
// approved_in_part). ns/op is one approval's whole cycle.
func BenchmarkQuorumApproval(b *testing.B) {
	for _, need := range []int{0, 2} {
		b.Run(fmt.Sprintf("approvals=%d", need), func(b *testing.B) {
			svc := newService(b, app.Config{MaxPending: 1 << 20})
			ctx := b.Context()
			if need > 0 {
				if _, err := svc.CreatePolicy(ctx, humanCaller, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Ship", Approvals: need}); err != nil {
					b.Fatal(err)
				}
			}
			bob := askd.Caller{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover}
			approve := &askd.Answer{Decision: askd.DecisionApproved}
			for b.Loop() {
				a, err := svc.Create(ctx, agentCaller, &askd.AskInput{Kind: askd.KindApproval, Title: "Ship"}, app.CreateOptions{})
				if err != nil {
					b.Fatal(err)
				}
				people := []askd.Caller{humanCaller, bob}[:max(need, 1)]
				for _, who := range people {
					if _, err := svc.Answer(ctx, who, a.ID, approve); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
