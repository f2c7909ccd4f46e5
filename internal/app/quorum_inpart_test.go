package app_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/sqlite"
	"github.com/askd-dev/askd/internal/testserver"
)

// eachStore runs f on a new SQLite store and, when one can be started, a
// PostgreSQL one.
func eachStore(t *testing.T, f func(t *testing.T, st askd.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "askd.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
	t.Run("postgres", func(t *testing.T) { f(t, testserver.OpenPostgres(t, pgtest.URL(t))) })
}

// countingGate is a before-tell gate that records what it is asked and
// answers allow.
type countingGate struct {
	mu    sync.Mutex
	asked []*app.GateRequest
	allow bool
}

func (g *countingGate) Allow(_ context.Context, req *app.GateRequest) (bool, string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, req)
	return g.allow, "not today", nil
}

func (g *countingGate) calls() []*app.GateRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*app.GateRequest(nil), g.asked...)
}

// An approval counted toward a quorum (approved_in_part) tells the agent
// nothing, so the before-tell gate is not asked; the approval that
// completes the count is, and a refusal leaves the count as it was. The
// approval in part is recorded at its time but leaves the ask's
// updated_at, so the team's escalation is not put off: due a minute after
// the ask was made, it escalates then although dave approved half-way.
func TestQuorumApprovalInPart(t *testing.T) {
	eachStore(t, func(t *testing.T, st askd.Store) {
		ctx := t.Context()
		clk := &teamClock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
		secret := teamFixture(t, st) // team ops (dave), escalating after a minute to carol
		gate := &countingGate{}
		svc := app.New(st, app.Config{Now: clk.now, BeforeTell: gate})
		carol := askd.Caller{Name: "carol", Role: askd.RoleHuman, Access: askd.AccessAdmin}
		dave := askd.Caller{Name: "dave", Role: askd.RoleHuman, Access: askd.AccessApprover}
		if _, err := svc.CreatePolicy(ctx, carol, &askd.PolicyInput{Match: askd.MatchTitle, Title: "Ship", Approvals: 2}); err != nil {
			t.Fatal(err)
		}
		agent, err := svc.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		agent.Session = "deploys"
		made := clk.now()
		a, err := svc.Create(ctx, agent, &askd.AskInput{Kind: askd.KindApproval, Title: "Ship"}, app.CreateOptions{})
		if err != nil || a.ApprovalsNeeded != 2 {
			t.Fatalf("create = %+v, %v; want 2 approvals needed", a, err)
		}
		// The agent's grace window passes: the decision is to be told, so
		// a gate stands before it.
		if a, err = svc.AwaitOutcome(ctx, agent, app.Wait{Ask: a.ID, Mode: app.AwaitGrace, Until: clk.now()}, nil); err != nil || !a.ToBeTold {
			t.Fatalf("past the grace window: %+v, %v; want pending, to be told", a, err)
		}

		clk.add(30 * time.Second)
		part, err := svc.Answer(ctx, dave, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		if err != nil || !part.Pending() || len(part.Approvals) != 1 {
			t.Fatalf("dave's approval = %+v, %v; want pending, 1 of 2", part, err)
		}
		if n := len(gate.calls()); n != 0 {
			t.Fatalf("the gate was asked %d times about an approval in part, which tells nothing", n)
		}
		stored, hist := storedQuorumAsk(t, st, a.ID)
		last := hist[len(hist)-1]
		if !stored.UpdatedAt.Equal(made) || !stored.Approvals[0].At.Equal(clk.now()) ||
			last.Action != askd.ActionApprovedInPart || last.Actor != "dave" || !last.At.Equal(clk.now()) {
			t.Fatalf("stored updated_at %s, approval at %s, last row %s by %s at %s; want updated_at %s, the approval and its row at %s",
				stored.UpdatedAt, stored.Approvals[0].At, last.Action, last.Actor, last.At, made, clk.now())
		}

		clk.add(31 * time.Second) // a minute and a second after the ask was made
		if n, err := svc.EscalateDue(ctx); err != nil || n != 1 {
			t.Fatalf("a minute after the ask was made: escalated %d, %v; want 1 (the approval in part does not put it off)", n, err)
		}

		// The approval that would decide is gated; refused, it changes
		// nothing.
		before, hist := storedQuorumAsk(t, st, a.ID)
		_, err = svc.Answer(ctx, carol, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		if askd.ErrorCode(err) != askd.EFORBIDDEN {
			t.Fatalf("carol's approval, the gate refusing: %v; want EFORBIDDEN", err)
		}
		asked := gate.calls()
		if len(asked) != 1 || asked[0].By != "carol" || len(asked[0].Ask.Approvals) != 1 {
			t.Fatalf("the gate was asked %d times (%+v); want once, about carol's approval of an ask approved by dave", len(asked), asked)
		}
		after, hist2 := storedQuorumAsk(t, st, a.ID)
		if !after.Pending() || len(after.Approvals) != 1 || !after.UpdatedAt.Equal(before.UpdatedAt) || len(hist2) != len(hist) {
			t.Fatalf("after the gate's refusal: %+v with %d rows; want as before (%d rows)", after, len(hist2), len(hist))
		}

		gate.mu.Lock()
		gate.allow = true
		gate.mu.Unlock()
		done, err := svc.Answer(ctx, carol, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		if err != nil || done.Status != askd.StatusAnswered || done.Answer.Decision != askd.DecisionApproved {
			t.Fatalf("carol's approval, the gate allowing: %+v, %v; want approved", done, err)
		}
		if n := len(gate.calls()); n != 2 {
			t.Errorf("the gate was asked %d times in all, want 2: the refused and the allowed last approval", n)
		}
	})
}

// storedQuorumAsk reads ask id and its history from the store.
func storedQuorumAsk(t *testing.T, st askd.Store, id int64) (*askd.Ask, []*askd.Event) {
	t.Helper()
	var a *askd.Ask
	var evs []*askd.Event
	err := st.View(t.Context(), func(tx askd.Tx) (err error) {
		if a, err = tx.Asks.Ask(t.Context(), id); err != nil {
			return err
		}
		evs, err = tx.Events.AskHistory(t.Context(), id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, evs
}
