package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/testserver"
)

// quorumCrew is a crew with three approvers (alice the admin, bob, dave)
// and a policy: approvals titled title need two of them.
func quorumCrew(t *testing.T, srv *testserver.Server, title string, in askd.PolicyInput) *crew {
	t.Helper()
	cr := startCrew(t, srv)
	cr.person(t, "dave", askd.AccessApprover)
	in.Match, in.Title = askd.MatchTitle, title
	if in.Approvals == 0 {
		in.Approvals = 2
	}
	if _, err := cr.people["alice"].CreatePolicy(ctxT(t), &in); err != nil {
		t.Fatal(err)
	}
	return cr
}

// waitFor starts an agent's blocking ask and returns what its call gave,
// once: the channel is closed after the one result.
func waitFor(t *testing.T, ag *client.Client, in *askd.AskInput) <-chan *askd.Ask {
	t.Helper()
	out := make(chan *askd.Ask, 1)
	go func() {
		defer close(out)
		a, err := ag.Create(ctxT(t), in, 60*time.Second)
		if err != nil {
			t.Errorf("the agent's blocking call: %v", err)
			return
		}
		out <- a
	}()
	return out
}

// pendingAsk waits until the agent's session has a pending ask (the
// agent's request on its way), and returns it.
func pendingAsk(t *testing.T, srv *testserver.Server, session string) *askd.Ask {
	t.Helper()
	return srv.Pending(t, session, 1)[0]
}

func actions(hist []*askd.Event) string {
	var rows []string
	for _, e := range hist {
		rows = append(rows, e.Action+" by "+e.Actor)
	}
	return strings.Join(rows, ", ")
}

// TestQuorum: on SQLite and PostgreSQL, with three people, an approval a
// policy covers is decided by the second distinct approval; the same
// person's second approval is 409, the agent's owner's 403 with
// exclude_owner, each changing nothing; the agent's blocking call returns
// once, with the decision; every approval is a history row.
func TestQuorum(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		cr := quorumCrew(t, srv, "Deploy to production", askd.PolicyInput{ExcludeOwner: true})
		ctx := ctxT(t)
		alice, bob, dave := cr.people["alice"], cr.people["bob"], cr.people["dave"]
		ag := cr.agent(t, "deployer", "bob")
		got := waitFor(t, ag, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy to production"})
		a := pendingAsk(t, srv, ag.Session)
		if a.ApprovalsNeeded != 2 || !a.ExcludeOwner || len(a.Approvals) != 0 {
			t.Fatalf("new ask %+v, want 2 approvals needed, the owner excluded", a)
		}

		before := storeState(t, srv)
		_, err := bob.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		wantStatus(t, err, http.StatusForbidden, "agent of yours")
		if after := storeState(t, srv); after != before {
			t.Errorf("the owner's refused approval changed the store\nbefore %s\nafter  %s", before, after)
		}

		part, err := alice.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		if err != nil || !part.Pending() || len(part.Approvals) != 1 || part.Approvals[0].By != "alice" {
			t.Fatalf("alice's approval = %+v, %v; want pending, approved by alice", part, err)
		}
		if c, err := ag.Check(ctx, a.ID, 0); err != nil || !c.Pending() || c.ApprovalsNeeded != 2 || len(c.Approvals) != 1 {
			t.Fatalf("check_ask after one approval = %+v, %v; want pending, 1 of 2", c, err)
		}
		select {
		case a := <-got:
			t.Fatalf("the agent's call returned after one approval: %+v", a)
		default:
		}

		before = storeState(t, srv)
		_, err = alice.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		wantStatus(t, err, http.StatusConflict, "approved ask")
		if after := storeState(t, srv); after != before {
			t.Errorf("alice's second approval changed the store\nbefore %s\nafter  %s", before, after)
		}

		done, err := dave.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		if err != nil || done.Status != askd.StatusAnswered || done.Answer.Decision != askd.DecisionApproved || len(done.Approvals) != 2 {
			t.Fatalf("dave's approval = %+v, %v; want answered, approved by two", done, err)
		}
		res, ok := <-got
		if !ok || res.Status != askd.StatusAnswered || res.Answer.Decision != askd.DecisionApproved {
			t.Fatalf("the agent's call gave %+v (%v), want approved", res, ok)
		}
		if _, more := <-got; more {
			t.Error("the agent's call returned twice")
		}
		stored, hist := storedAsk(t, srv, a.ID)
		if want := "created by deployer, approved_in_part by alice, answered by dave, told by deployer"; actions(hist) != want {
			t.Errorf("history %s, want %s", actions(hist), want)
		}
		if stored.Status != askd.StatusAnswered || len(stored.Approvals) != 2 {
			t.Errorf("stored %+v, want answered with two approvals", stored)
		}
	})
}

// TestQuorumEditAndReject: an edit starts the count again with the
// editor's approval, and the decision is modified with that payload; one
// rejection decides at once; an always-allow rule does not answer an
// approval a policy covers.
func TestQuorumEditAndReject(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := quorumCrew(t, srv, "Run the migration", askd.PolicyInput{})
	ctx := ctxT(t)
	alice, bob, dave := cr.people["alice"], cr.people["bob"], cr.people["dave"]
	ag := cr.agent(t, "migrator", "")
	in := &askd.AskInput{Kind: askd.KindApproval, Title: "Run the migration", Payload: json.RawMessage(`{"db":"staging"}`)}

	a, err := ag.Create(ctx, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	edited, err := bob.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"db":"prod"}`)})
	if err != nil || !edited.Pending() || len(edited.Approvals) != 1 || edited.Approvals[0].By != "bob" ||
		string(edited.Approvals[0].Payload) != `{"db":"prod"}` || string(edited.Payload) != `{"db":"staging"}` {
		t.Fatalf("bob's edit = %+v, %v; want pending, the count started again with bob's payload, the agent's kept", edited, err)
	}
	done, err := alice.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if err != nil || done.Status != askd.StatusAnswered || done.Answer.Decision != askd.DecisionModified || string(done.Answer.Payload) != `{"db":"prod"}` {
		t.Fatalf("alice's approval of the edit = %+v, %v; want modified with bob's payload", done, err)
	}

	// A tool call retried with the same input after an edit re-attaches to
	// its ask, approvals and all: the ask keeps the agent's payload.
	if _, err := alice.CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchTool, Tool: "Deploy", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	call := &askd.AskInput{Kind: askd.KindApproval, Title: "Allow Deploy", ToolName: "Deploy", ToolUseID: "toolu_1", Payload: json.RawMessage(`{"to":"eu"}`)}
	d, err := ag.Create(ctx, call, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dave.Answer(ctx, d.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"to":"us"}`)}); err != nil {
		t.Fatal(err)
	}
	again, err := ag.Create(ctx, call, 0)
	if err != nil || again.ID != d.ID || !again.Pending() || len(again.Approvals) != 1 || string(again.Approvals[0].Payload) != `{"to":"us"}` {
		t.Fatalf("the retried call = %+v, %v; want ask %d with dave's edit counted", again, err, d.ID)
	}

	// An allow rule made from a covered ask answers none of the session's.
	if _, err := alice.CreateRule(ctx, &askd.RuleInput{AskID: a.ID, Match: askd.MatchTitle, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}); err != nil {
		t.Fatal(err)
	}
	b, err := ag.Create(ctx, in, 0)
	if err != nil || !b.Pending() || b.ApprovalsNeeded != 2 {
		t.Fatalf("a covered approval with an allow rule = %+v, %v; want pending, needing 2", b, err)
	}
	if _, err := dave.Answer(ctx, b.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	rejected, err := bob.Answer(ctx, b.ID, &askd.Answer{Decision: askd.DecisionRejected})
	if err != nil || rejected.Status != askd.StatusAnswered || rejected.Answer.Decision != askd.DecisionRejected {
		t.Fatalf("bob's rejection = %+v, %v; want rejected at once", rejected, err)
	}
	_, hist := storedAsk(t, srv, b.ID)
	if want := "created by migrator, approved_in_part by dave, answered by bob"; actions(hist) != want {
		t.Errorf("history %s, want %s", actions(hist), want)
	}
}

// TestQuorumRaces: on SQLite and PostgreSQL, two approvals at the same
// instant count once each; a rejection racing the last approval ends in
// exactly one decision, which the agent's call returns once.
func TestQuorumRaces(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		cr := quorumCrew(t, srv, "Rotate the keys", askd.PolicyInput{Approvals: 3})
		ctx := ctxT(t)
		people := []string{"alice", "bob", "dave"}
		at := func(round int, who []string, ans []*askd.Answer, id int64) []error {
			errs := make([]error, len(who))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range who {
				wg.Go(func() {
					<-start
					_, errs[i] = cr.people[who[i]].Answer(ctx, id, ans[i])
				})
			}
			close(start)
			wg.Wait()
			return errs
		}
		approve := &askd.Answer{Decision: askd.DecisionApproved}
		reject := &askd.Answer{Decision: askd.DecisionRejected}
		for round := range 10 {
			ag := cr.agent(t, fmt.Sprintf("rotator%d", round), "")
			got := waitFor(t, ag, &askd.AskInput{Kind: askd.KindApproval, Title: "Rotate the keys"})
			a := pendingAsk(t, srv, ag.Session)

			errs := at(round, people[:2], []*askd.Answer{approve, approve}, a.ID)
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("round %d: two approvals at once: %v", round, errs)
			}
			stored, _ := storedAsk(t, srv, a.ID)
			if !stored.Pending() || len(stored.Approvals) != 2 || stored.Approvals[0].By == stored.Approvals[1].By {
				t.Fatalf("round %d: after two approvals at once %+v; want pending, 2 of 3 by two people", round, stored)
			}

			errs = at(round, []string{"dave", "alice"}, []*askd.Answer{approve, reject}, a.ID)
			if (errs[0] == nil) == (errs[1] == nil) {
				t.Fatalf("round %d: the last approval and a rejection at once: %v; want one to decide", round, errs)
			}
			want := askd.DecisionApproved
			if errs[1] == nil {
				want = askd.DecisionRejected
			}
			res, ok := <-got
			if !ok || res.Answer == nil || res.Answer.Decision != want {
				t.Fatalf("round %d: the agent's call gave %+v; want %s", round, res, want)
			}
			if _, more := <-got; more {
				t.Fatalf("round %d: the agent's call returned twice", round)
			}
			stored, hist := storedAsk(t, srv, a.ID)
			answered := strings.Count(actions(hist), "answered by")
			if stored.Answer.Decision != want || answered != 1 {
				t.Fatalf("round %d: stored %s with %d answered rows (%s); want %s and one", round, stored.Answer.Decision, answered, actions(hist), want)
			}
		}
	})
}

// approveLink mints person's answer links for ask a as notifications do,
// and returns the approve link's URL.
func approveLink(t *testing.T, srv *testserver.Server, a *askd.Ask, person string) string {
	t.Helper()
	links, err := srv.App.MintAnswerLinksFor(ctxT(t), person, a.ID, a.Revision, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Answer.Decision == askd.DecisionApproved {
			return srv.URL + "/a/" + l.Code
		}
	}
	t.Fatalf("no approve link for %s among %+v", person, links)
	return ""
}

// TestQuorumDoubleTap: a person's answer link tapped twice at once counts
// once; their approval in the inbox after it is 409; another person's
// link completes the count.
func TestQuorumDoubleTap(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		cr := quorumCrew(t, srv, "Drop the cache", askd.PolicyInput{})
		ctx := ctxT(t)
		a, err := cr.agent(t, "cacher", "").Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Drop the cache"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		u := approveLink(t, srv, a, "alice")
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i := range statuses {
			wg.Go(func() { statuses[i], _ = linkPost(t, u, "confirm=1") })
		}
		wg.Wait()
		stored, _ := storedAsk(t, srv, a.ID)
		if !stored.Pending() || len(stored.Approvals) != 1 || stored.Approvals[0].By != "alice" {
			t.Fatalf("after two taps (%v): %+v; want pending, one approval by alice", statuses, stored)
		}
		if status, page := linkGet(t, u); !strings.Contains(page, "1 of 2 approvals, by alice") {
			t.Errorf("the used link's page: %d %s; want the count", status, page)
		}
		before := storeState(t, srv)
		_, err = cr.people["alice"].Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		wantStatus(t, err, http.StatusConflict, "approved ask")
		if status, _ := linkPost(t, u, "confirm=1"); status != http.StatusConflict {
			t.Errorf("alice's link again after her approval: %d, want 409", status)
		}
		// A notification minted for her now carries no buttons: her
		// approval is in.
		if links, err := srv.App.MintAnswerLinksFor(ctx, "alice", a.ID, a.Revision, 0); err != nil || len(links) != 0 {
			t.Errorf("links minted for alice after her approval: %+v, %v; want none", links, err)
		}
		if after := storeState(t, srv); after != before {
			t.Errorf("alice's second approval changed the store\nbefore %s\nafter  %s", before, after)
		}
		if status, page := linkPost(t, approveLink(t, srv, a, "bob"), "confirm=1"); status != http.StatusOK {
			t.Fatalf("bob's tap: %d %s", status, page)
		}
		stored, _ = storedAsk(t, srv, a.ID)
		if stored.Status != askd.StatusAnswered || stored.Answer.Decision != askd.DecisionApproved || stored.SettledBy != "bob" {
			t.Fatalf("after bob's tap: %+v; want approved, settled by bob", stored)
		}
	})
}

// TestPolicyAPI: admins only; approvals outside 2 to 5 is 422 naming
// approvals; a prefix with a shell operator is refused; list and revoke.
func TestPolicyAPI(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	cr := startCrew(t, srv)
	ctx := ctxT(t)
	before := storeState(t, srv)
	_, err := cr.people["bob"].CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchTool, Tool: "Bash", Approvals: 2})
	wantStatus(t, err, http.StatusForbidden, "admin")
	for _, in := range []askd.PolicyInput{
		{Match: askd.MatchTool, Tool: "Bash", Approvals: 1},
		{Match: askd.MatchTool, Tool: "Bash", Approvals: 6},
	} {
		_, err := cr.people["alice"].CreatePolicy(ctx, &in)
		wantStatus(t, err, http.StatusUnprocessableEntity, "approvals")
	}
	_, err = cr.people["alice"].CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchPrefix, Tool: "Bash", Prefix: "make; rm", Approvals: 2})
	wantStatus(t, err, http.StatusUnprocessableEntity, "prefix")
	if after := storeState(t, srv); after != before {
		t.Errorf("refused policies changed the store\nbefore %s\nafter  %s", before, after)
	}
	p, err := cr.people["alice"].CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchPrefix, Tool: "Bash", Prefix: "terraform apply", Approvals: 3})
	if err != nil || p.ID == 0 || p.CreatedBy != "alice" {
		t.Fatalf("create = %+v, %v", p, err)
	}
	ag := cr.agent(t, "infra", "")
	a, err := ag.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Allow Bash: terraform apply", ToolName: "Bash",
		Payload: json.RawMessage(`{"command":"terraform apply -auto-approve"}`)}, 0)
	if err != nil || a.ApprovalsNeeded != 3 {
		t.Fatalf("covered ask = %+v, %v; want 3 approvals needed", a, err)
	}
	b, err := ag.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Allow Bash: terraform apply; echo", ToolName: "Bash",
		Payload: json.RawMessage(`{"command":"terraform apply; echo"}`)}, 0)
	if err != nil || b.ApprovalsNeeded != 0 {
		t.Fatalf("a command with a shell operator = %+v, %v; want it not matched, as a rule would not", b, err)
	}
	list, err := cr.people["alice"].Policies(ctx)
	if err != nil || len(list) != 1 || list[0].ID != p.ID {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := cr.people["bob"].Policies(ctx); askd.ErrorCode(err) != askd.EFORBIDDEN {
		t.Errorf("bob's list: %v, want 403", err)
	}
	if err := cr.people["alice"].RevokePolicy(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := cr.people["alice"].RevokePolicy(ctx, p.ID); askd.ErrorCode(err) != askd.ENOTFOUND {
		t.Errorf("revoke again: %v, want 404", err)
	}
}

// TestQuorumRelayedPrompt: a permission prompt relayed from the Claude Code
// terminal that a policy covers counts approvals in the inbox like any
// other, and an approval in part sends nothing back (the bridge waits for
// a decision). Answered in the terminal meanwhile, it was answered outside
// the quorum, which askd cannot hold back: its card closes saying so, with
// the count it had, in the answer and the history; the approvals stay.
func TestQuorumRelayedPrompt(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		cr := startCrew(t, srv)
		ctx := ctxT(t)
		alice := cr.people["alice"]
		if _, err := alice.CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchTool, Tool: "Bash", Approvals: 2}); err != nil {
			t.Fatal(err)
		}
		ag := cr.agent(t, "coder", "")
		relayed, err := ag.RelayPermission(ctx, ag.Session, &askd.PermissionRelay{RequestID: "abcde", ToolName: "Bash", InputPreview: `{"command":"terraform apply"}`})
		if err != nil || !relayed.Pending() || relayed.ApprovalsNeeded != 2 {
			t.Fatalf("relayed = %+v, %v; want pending, needing 2", relayed, err)
		}
		if _, err := alice.Answer(ctx, relayed.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		if c, err := ag.Check(ctx, relayed.ID, 0); err != nil || !c.Pending() {
			t.Fatalf("what the bridge sees after one approval: %+v, %v; want pending (no allow is sent)", c, err)
		}
		closed, err := ag.CloseRelay(ctx, ag.Session, "abcde", app.RelayAnsweredInTerminal)
		if err != nil {
			t.Fatal(err)
		}
		stored, hist := storedAsk(t, srv, relayed.ID)
		const want = "answered in the terminal, outside the quorum (1 of 2 approvals, by alice here)"
		for _, got := range []*askd.Ask{closed, stored} {
			if got.Status != askd.StatusCancelled || got.CancelReason != askd.ReasonWithdrawn || got.Answer == nil ||
				!strings.HasPrefix(got.Answer.Response, want) || len(got.Approvals) != 1 {
				t.Fatalf("closed card %+v (answer %+v); want withdrawn, saying %q, alice's approval kept", got, got.Answer, want)
			}
		}
		last := hist[len(hist)-1]
		if last.Action != askd.ActionWithdrawn || !strings.HasPrefix(last.Note, want) {
			t.Errorf("last history row %s: %q; want withdrawn: %q", last.Action, last.Note, want)
		}
		// An uncovered prompt closes as before.
		plain, err := ag.RelayPermission(ctx, ag.Session, &askd.PermissionRelay{RequestID: "fghij", ToolName: "Read", InputPreview: `{"file_path":"a.go"}`})
		if err != nil {
			t.Fatal(err)
		}
		if c, err := ag.CloseRelay(ctx, ag.Session, "fghij", app.RelayAnsweredInTerminal); err != nil || c.ID != plain.ID || c.Answer.Response != "answered in the terminal" {
			t.Errorf("an uncovered prompt closed: %+v, %v", c, err)
		}
	})
}

// TestQuorumLinkAfterEdit: an edit starts the count again on a payload
// that links minted before it never showed: they approve nothing (409,
// saying who edited it) and change nothing; a link minted after it
// approves the edit.
func TestQuorumLinkAfterEdit(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		cr := quorumCrew(t, srv, "Resize the disk", askd.PolicyInput{})
		ctx := ctxT(t)
		a, err := cr.agent(t, "sizer", "").Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "Resize the disk", Payload: json.RawMessage(`{"gb":100}`)}, 0)
		if err != nil {
			t.Fatal(err)
		}
		old := approveLink(t, srv, a, "alice")
		if _, err := cr.people["bob"].Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"gb":1000}`)}); err != nil {
			t.Fatal(err)
		}
		before := storeState(t, srv)
		if status, page := linkPost(t, old, "confirm=1"); status != http.StatusConflict || !strings.Contains(page, "bob has edited") {
			t.Errorf("alice's link minted before bob's edit: %d %s; want 409 saying bob edited it", status, page)
		}
		if after := storeState(t, srv); after != before {
			t.Errorf("a link minted before the edit changed the store\nbefore %s\nafter  %s", before, after)
		}
		if status, page := linkPost(t, approveLink(t, srv, a, "alice"), "confirm=1"); status != http.StatusOK {
			t.Fatalf("alice's link minted after the edit: %d %s", status, page)
		}
		stored, _ := storedAsk(t, srv, a.ID)
		if stored.Status != askd.StatusAnswered || stored.Answer.Decision != askd.DecisionModified || string(stored.Answer.Payload) != `{"gb":1000}` {
			t.Fatalf("after alice approved the edit: %+v; want modified with bob's payload", stored)
		}
	})
}

// TestHookOnlyPolicies: the PermissionRequest hook that askd install claude
// --channel writes (/hooks/claude?only=policies) gives no decision for a
// prompt no policy covers, at once and storing nothing, so Claude Code
// shows it in the terminal (and the channel relays it); a covered prompt
// it takes, so the terminal never shows it: it waits for its quorum in the
// inbox, and the hook returns one decision once two people have approved.
func TestHookOnlyPolicies(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		ctx := ctxT(t)
		if _, err := srv.Human().CreatePolicy(ctx, &askd.PolicyInput{Match: askd.MatchPrefix, Tool: "Bash", Prefix: "terraform apply", Approvals: 2}); err != nil {
			t.Fatal(err)
		}
		bob := client.New(srv.URL, srv.TokenWith(t, app.TokenSpec{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover}))

		before := storeState(t, srv)
		wantReply(t, postHook(ctx, t, srv, srv.AgentToken, "?only="+httpapi.OnlyPolicies, permissionRequest("chan-1", "Bash", `{"command":"ls -la"}`), nil), 200, "{}\n")
		if after := storeState(t, srv); after != before {
			t.Errorf("an uncovered prompt changed the store\nbefore %s\nafter  %s", before, after)
		}

		got := postAsync(t, srv, "?only="+httpapi.OnlyPolicies, permissionRequest("chan-1", "Bash", `{"command":"terraform apply -auto-approve"}`), nil)
		a := firstPending(t, srv, "chan-1")
		if a.ApprovalsNeeded != 2 || a.ToolName != "Bash" {
			t.Fatalf("the covered prompt's ask %+v; want an approval needing 2", a)
		}
		if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-got:
			t.Fatalf("the hook decided after one approval: %+v", r)
		default:
		}
		if _, err := bob.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		r := awaitReply(t, got)
		if r.status != http.StatusOK || !strings.Contains(r.body, `"behavior":"allow"`) {
			t.Fatalf("the hook's reply %d %s; want allow", r.status, r.body)
		}
	})
}
