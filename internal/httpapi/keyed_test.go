package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	askdgate "github.com/askd-dev/askd/internal/gate"
	"github.com/askd-dev/askd/internal/testserver"
)

// keyedApproval is a gate's approval under key.
func keyedApproval(key, title string) *askd.AskInput {
	return &askd.AskInput{Kind: askd.KindApproval, Title: title, ToolName: "gate run",
		Payload: json.RawMessage(`{"command": "make deploy"}`), Key: key}
}

// sessionOf is a client of token secret asking in session.
func sessionOf(srv *testserver.Server, secret, session string) *client.Client {
	c := client.New(srv.URL, secret)
	c.Session = session
	return c
}

// TestKeyedApproval (SPEC §12): on SQLite and PostgreSQL, the same token
// asking with the same key from any session gets the same ask back, 201,
// whatever its status, and may read it by id; the same key with other
// content is 409 naming the key, changing nothing; another token's key is
// another ask; a keyed approval has no deadline of its own.
func TestKeyedApproval(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		ctx := ctxT(t)
		secret := srv.TokenWith(t, app.TokenSpec{Name: "ci", Role: askd.RoleAgent})
		one, two := sessionOf(srv, secret, "job-1"), sessionOf(srv, secret, "job-2")
		alice := srv.Human()

		first, err := one.Create(ctx, keyedApproval("deploy 4f2a", "Deploy 4f2a"), 0)
		if err != nil || first.Key != "deploy 4f2a" || !first.Pending() || first.Deadline != nil {
			t.Fatalf("first ask = %+v, %v; want pending, keyed, no deadline", first, err)
		}
		again, err := two.Create(ctx, keyedApproval("deploy 4f2a", "Deploy 4f2a"), 0)
		if err != nil || again.ID != first.ID || again.Session != "job-1" {
			t.Fatalf("the same key from another session = %+v, %v; want ask %d of job-1", again, err, first.ID)
		}
		if got, err := two.Check(ctx, first.ID, 0); err != nil || got.ID != first.ID {
			t.Fatalf("another session's check by id = %+v, %v; want the keyed ask", got, err)
		}

		for _, c := range []struct {
			name string
			edit func(*askd.AskInput)
		}{
			{"title", func(in *askd.AskInput) { in.Title = "Deploy 9e1b" }},
			{"details", func(in *askd.AskInput) { in.Details = "and drop the table" }},
			{"payload", func(in *askd.AskInput) { in.Payload = json.RawMessage(`{"command": "make deploy-all"}`) }},
		} {
			in := keyedApproval("deploy 4f2a", "Deploy 4f2a")
			c.edit(in)
			before := storeState(t, srv)
			_, err := two.Create(ctx, in, 0)
			wantStatus(t, err, http.StatusConflict, `key "deploy 4f2a"`)
			if after := storeState(t, srv); after != before {
				t.Errorf("other %s under the key changed the store\nbefore %s\nafter  %s", c.name, before, after)
			}
		}

		other := sessionOf(srv, srv.TokenWith(t, app.TokenSpec{Name: "ci-2", Role: askd.RoleAgent}), "job-1")
		theirs, err := other.Create(ctx, keyedApproval("deploy 4f2a", "Deploy 4f2a"), 0)
		if err != nil || theirs.ID == first.ID {
			t.Fatalf("another token's key = %+v, %v; want an ask of its own", theirs, err)
		}
		_, err = other.Check(ctx, first.ID, 0)
		wantStatus(t, err, http.StatusNotFound, "not found")

		// Decided: approved (edited), then the same request once more.
		edited := json.RawMessage(`{"command":"make deploy DRY=1"}`)
		if _, err := alice.Answer(ctx, first.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: edited}); err != nil {
			t.Fatal(err)
		}
		decided, err := two.Create(ctx, keyedApproval("deploy 4f2a", "Deploy 4f2a"), 0)
		if err != nil || decided.ID != first.ID || decided.Answer == nil || decided.Answer.Decision != askd.DecisionModified ||
			string(decided.Answer.Payload) != string(edited) {
			t.Fatalf("the key after an edit = %+v, %v; want ask %d, modified with %s", decided, err, first.ID, edited)
		}
		before := storeState(t, srv)
		_, err = one.Create(ctx, keyedApproval("deploy 4f2a", "Deploy 9e1b"), 0)
		wantStatus(t, err, http.StatusConflict, "answered")
		if after := storeState(t, srv); after != before {
			t.Errorf("a new title under a decided key changed the store\nbefore %s\nafter  %s", before, after)
		}

		// Rejected stays rejected.
		no, err := one.Create(ctx, keyedApproval("migrate 77", "Migrate"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := alice.Answer(ctx, no.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "not on a Friday"}); err != nil {
			t.Fatal(err)
		}
		if got, err := two.Create(ctx, keyedApproval("migrate 77", "Migrate"), 0); err != nil || got.ID != no.ID ||
			got.Answer == nil || got.Answer.Decision != askd.DecisionRejected || got.Answer.Comment != "not on a Friday" {
			t.Fatalf("a rejected key = %+v, %v; want ask %d rejected with its comment", got, err, no.ID)
		}
		var keyed []*askd.Ask
		for _, a := range asksOf(t, srv, "ci") {
			if a.Key != "" {
				keyed = append(keyed, a)
			}
		}
		if len(keyed) != 2 {
			t.Errorf("token ci has %d keyed asks stored, want 2: %+v", len(keyed), keyed)
		}
	})
}

// asksOf reads every ask of agent token name from the store.
func asksOf(t *testing.T, srv *testserver.Server, name string) []*askd.Ask {
	t.Helper()
	var out []*askd.Ask
	err := srv.Store.View(ctxT(t), func(tx askd.Tx) (err error) {
		out, err = tx.Asks.FindAsks(ctxT(t), askd.AskFilter{Agent: name})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeyedApprovalAtOnce: sixteen requests with one key at the same
// instant, from as many sessions, make one ask.
func TestKeyedApprovalAtOnce(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		secret := srv.TokenWith(t, app.TokenSpec{Name: "ci", Role: askd.RoleAgent})
		ids := make([]int64, 16)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range ids {
			c := sessionOf(srv, secret, "job-"+strings.Repeat("x", i+1))
			wg.Go(func() {
				<-start
				a, err := c.Create(ctxT(t), keyedApproval("release v2", "Release v2"), 0)
				if err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				ids[i] = a.ID
			})
		}
		close(start)
		wg.Wait()
		for i, id := range ids {
			if id != ids[0] {
				t.Fatalf("request %d got ask %d, request 0 ask %d: want one ask", i, id, ids[0])
			}
		}
		if n := len(asksOf(t, srv, "ci")); n != 1 {
			t.Errorf("%d asks stored, want 1", n)
		}
	})
}

// TestKeyedApprovalReplaces: with replaces, a new key cancels the token's
// pending keyed approvals under that prefix as replaced — not decided
// ones, not other prefixes, not another token's.
func TestKeyedApprovalReplaces(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		ctx := ctxT(t)
		secret := srv.TokenWith(t, app.TokenSpec{Name: "git", Role: askd.RoleAgent})
		ag := sessionOf(srv, secret, "repo")
		// Keyed as askd gate git keys a fast-forward of ref to commit.
		push := func(ag *client.Client, ref, commit string) *askd.Ask {
			t.Helper()
			const repo, old = "/srv/git/shop.git", "0123456789abcdef0123456789abcdef01234567"
			in := keyedApproval(askdgate.GitKey(repo, "refs/heads/"+ref, askdgate.UpdateFastForward, old, strings.Repeat(commit, 20)), "Push to "+ref)
			in.Replaces = askdgate.GitKeyPrefix(repo, "refs/heads/"+ref, len(old))
			a, err := ag.Create(ctx, in, 0)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		decided := push(ag, "main", "a1")
		if _, err := srv.Human().Answer(ctx, decided.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		older := push(ag, "main", "b2")
		feature := push(ag, "feature", "c3")
		theirs := push(sessionOf(srv, srv.TokenWith(t, app.TokenSpec{Name: "git-2", Role: askd.RoleAgent}), "repo"), "main", "b2")
		newer := push(ag, "main", "d4")
		if !newer.Pending() || newer.ID == older.ID {
			t.Fatalf("newer push = %+v, want a new pending ask", newer)
		}
		want := map[int64]string{decided.ID: "answered", older.ID: "cancelled replaced", feature.ID: "pending", theirs.ID: "pending", newer.ID: "pending"}
		for id, w := range want {
			a, hist := storedAsk(t, srv, id)
			if got := strings.TrimSpace(string(a.Status) + " " + string(a.CancelReason)); got != w {
				t.Errorf("ask %d (%s) is %s, want %s", id, a.Key, got, w)
			}
			if id == older.ID && !strings.Contains(actions(hist), "replaced by git") {
				t.Errorf("the replaced ask's history: %s", actions(hist))
			}
		}
		// The replaced push asked again is its ask, cancelled: a gate asks
		// anew only for a new update.
		if again := push(ag, "main", "b2"); again.ID != older.ID || again.Status != askd.StatusCancelled {
			t.Errorf("the replaced key again = %+v, want ask %d cancelled", again, older.ID)
		}
	})
}

// TestKeyedApprovalRefusals: a key too long, with a control character, on
// another kind, with a tool_use_id, or replaces without key: 400 naming the
// field, nothing stored.
func TestKeyedApprovalRefusals(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ag := srv.Agent("s")
	for _, c := range []struct {
		in   *askd.AskInput
		says string
	}{
		{keyedApproval(strings.Repeat("k", 201), "Deploy"), "key: 201 characters, at most 200"},
		{keyedApproval("deploy\n4f2a", "Deploy"), "key: contains"},
		{keyedApproval("deploy\x1b[2J", "Deploy"), "key: contains"},
		{&askd.AskInput{Kind: askd.KindReady, Title: "Done", Key: "k"}, "key: only on approval asks"},
		{&askd.AskInput{Kind: askd.KindApproval, Title: "Deploy", Replaces: "push main"}, "replaces: only with key"},
		{&askd.AskInput{Kind: askd.KindApproval, Title: "Deploy", Key: "k", ToolUseID: "toolu_1"}, "key: not with tool_use_id"},
	} {
		before := storeState(t, srv)
		_, err := ag.Create(ctxT(t), c.in, 0)
		wantStatus(t, err, http.StatusBadRequest, c.says)
		if after := storeState(t, srv); after != before {
			t.Errorf("refused %q changed the store", c.says)
		}
	}
}

// TestGateAsksHaveNoDeadline: a gate's approval, keyed or not, waits as
// long as the gate does; a tool's approval over HTTP has a permission
// prompt's deadline.
func TestGateAsksHaveNoDeadline(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ag := srv.Agent("s")
	for tool, deadline := range map[string]bool{"gate run": false, "git push": false, "Bash": true} {
		a, err := ag.Create(ctxT(t), &askd.AskInput{Kind: askd.KindApproval, Title: "Run " + tool, ToolName: tool}, 0)
		if err != nil || (a.Deadline != nil) != deadline {
			t.Errorf("%s: %+v, %v; want a deadline: %v", tool, a, err, deadline)
		}
	}
}
