package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestKeepUntold: on SQLite and PostgreSQL, an agent reads its decided
// ask with keep_untold — a create again with its key, GET, GET ?wait= —
// and it stays untold; POST /api/asks/{id}/told then marks it, once: one
// told row, "handed on", the pending tell sent (check_ask {} lists it no
// more); a second mark is 409 with the ask and changes nothing. A pending
// ask, another token's, a person's mark and a keep_untold that is no
// boolean are refused.
func TestKeepUntold(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		ctx := ctxT(t)
		agent := srv.Agent("untold")
		person := srv.Human()
		grace := 0
		in := keyedApproval("deploy 1", "Deploy 1")
		in.GraceSeconds = &grace // returned pending: to be told once decided
		a, err := agent.CreateUntold(ctx, in, 0)
		if err != nil || !a.Pending() || !a.ToBeTold {
			t.Fatalf("create = %+v, %v; want pending, to be told", a, err)
		}
		_, told, err := agent.MarkTold(ctx, a.ID)
		wantStatus(t, err, http.StatusConflict, "pending")
		if told {
			t.Fatal("a pending ask was marked told")
		}
		if _, err := person.Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}

		reads := []struct {
			name string
			read func() (*askd.Ask, error)
		}{
			{"create again", func() (*askd.Ask, error) { return agent.CreateUntold(ctx, keyedApproval("deploy 1", "Deploy 1"), 0) }},
			{"create again with a wait", func() (*askd.Ask, error) {
				return agent.CreateUntold(ctx, keyedApproval("deploy 1", "Deploy 1"), time.Minute)
			}},
			{"GET", func() (*askd.Ask, error) { return agent.CheckUntold(ctx, a.ID, 0) }},
			{"GET with a wait", func() (*askd.Ask, error) { return agent.CheckUntold(ctx, a.ID, time.Minute) }},
		}
		for _, r := range reads {
			got, err := r.read()
			if err != nil || got.ID != a.ID || got.Status != askd.StatusAnswered || got.ToldAt != nil {
				t.Fatalf("%s with keep_untold = %+v, %v; want ask %d answered, untold", r.name, got, err, a.ID)
			}
		}
		if d := show(t, srv, a.ID); d.ToldAt != nil || countRows(d, askd.ActionTold) != 0 {
			t.Fatalf("after reads that keep it untold: told_at %v, %d told rows", d.ToldAt, countRows(d, askd.ActionTold))
		}

		marked, told, err := agent.MarkTold(ctx, a.ID)
		if err != nil || !told || marked.ToldAt == nil {
			t.Fatalf("mark told = %+v, %v, %v; want told by this mark", marked, told, err)
		}
		d := show(t, srv, a.ID)
		if n := countRows(d, askd.ActionTold); n != 1 || d.History[len(d.History)-1].Note != "handed on" {
			t.Fatalf("%d told rows, the last %+v; want one, handed on", n, d.History[len(d.History)-1])
		}
		if open, err := agent.Open(ctx); err != nil || len(open) != 0 {
			t.Fatalf("check_ask {} after the mark = %+v, %v; want nothing left to tell", open, err)
		}

		before := storeState(t, srv)
		again, told, err := agent.MarkTold(ctx, a.ID)
		if err != nil || told || again.ToldAt == nil || !again.ToldAt.Equal(*marked.ToldAt) {
			t.Fatalf("a second mark = %+v, %v, %v; want the ask as told, not by this mark", again, told, err)
		}
		if after := storeState(t, srv); after != before {
			t.Errorf("a second mark changed the store\nbefore %s\nafter  %s", before, after)
		}
		session := map[string]string{"Askd-Session": "untold"}
		status, body := rawRequest(t, srv, http.MethodPost, "/api/asks/"+itoa(a.ID)+"/told", srv.AgentToken, "", session)
		if status != http.StatusConflict || !strings.Contains(body, "told already") || !strings.Contains(body, `"told_at"`) {
			t.Fatalf("a second mark over HTTP: %d %s; want 409 with the ask, told_at set", status, body)
		}

		other := sessionOf(srv, srv.TokenWith(t, app.TokenSpec{Name: "other", Role: askd.RoleAgent}), "untold")
		_, _, err = other.MarkTold(ctx, a.ID)
		wantStatus(t, err, http.StatusNotFound, "not found")
		_, _, err = person.MarkTold(ctx, a.ID)
		wantStatus(t, err, http.StatusForbidden, "")
		_, err = agent.Check(ctx, a.ID, 0) // a plain read is no mark: nothing changes
		if err != nil {
			t.Fatal(err)
		}
		if n := countRows(show(t, srv, a.ID), askd.ActionTold); n != 1 {
			t.Fatalf("%d told rows after a check of a told ask, want 1", n)
		}
		status, body = rawRequest(t, srv, http.MethodGet, "/api/asks/"+itoa(a.ID)+"?keep_untold=maybe", srv.AgentToken, "", session)
		if status != http.StatusBadRequest || !strings.Contains(body, "keep_untold") {
			t.Fatalf("keep_untold=maybe: %d %s; want 400 naming it", status, body)
		}
	})
}

// TestReadsTell: without keep_untold, an agent's reads of its decided ask
// tell it as before: GET, and a create again with its key.
func TestReadsTell(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := srv.Agent("tells")
	for _, read := range []func(id int64) (*askd.Ask, error){
		func(id int64) (*askd.Ask, error) { return agent.Check(ctx, id, 0) },
		func(int64) (*askd.Ask, error) { return agent.Create(ctx, keyedApproval("read 2", "Read 2"), 0) },
	} {
		a, err := agent.Create(ctx, keyedApproval("read 2", "Read 2"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.Pending() {
			if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := read(a.ID); err != nil || got.ToldAt == nil {
			t.Fatalf("a plain read = %+v, %v; want it told", got, err)
		}
	}
}

// show is ask id with its history, as a person reads it.
func show(t *testing.T, srv *testserver.Server, id int64) *client.AskDetail {
	t.Helper()
	d, err := srv.Human().Show(ctxT(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// countRows counts d's history rows of action.
func countRows(d *client.AskDetail, action string) int {
	n := 0
	for _, ev := range d.History {
		if ev.Action == action {
			n++
		}
	}
	return n
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestOneCallOverHTTP (SPEC §14): on SQLite and PostgreSQL, a key asked
// with one_call gets its approval back, one_call in its JSON, until it is
// told; then a new one. Asked the other way it is 409 naming the key;
// one_call without a key is refused naming the field.
func TestOneCallOverHTTP(t *testing.T) {
	eachStore(t, app.Config{}, func(t *testing.T, srv *testserver.Server) {
		ctx := ctxT(t)
		agent := srv.Agent("gate")
		in := keyedApproval("mcp-gate 1", "Call write_file on fs")
		in.OneCall = true
		a, err := agent.CreateUntold(ctx, in, 0)
		if err != nil || !a.OneCall || !a.Pending() {
			t.Fatalf("create = %+v, %v; want pending, one_call", a, err)
		}
		if _, err := srv.Human().Answer(ctx, a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		again, err := agent.CreateUntold(ctx, in, time.Minute)
		if err != nil || again.ID != a.ID || again.ToldAt != nil || again.Status != askd.StatusAnswered {
			t.Fatalf("the key, decided and untold = %+v, %v; want ask %d at once, untold", again, err, a.ID)
		}
		if _, told, err := agent.MarkTold(ctx, again.ID); err != nil || !told {
			t.Fatalf("mark told: %v, %v", told, err)
		}
		next, err := agent.CreateUntold(ctx, in, 0)
		if err != nil || next.ID == a.ID || !next.Pending() || !next.OneCall {
			t.Fatalf("the key once told = %+v, %v; want a new pending approval", next, err)
		}
		other := *in
		other.OneCall = false
		_, err = agent.Create(ctx, &other, 0)
		wantStatus(t, err, http.StatusConflict, `key "mcp-gate 1"`)
		other = *in
		other.Key = ""
		_, err = agent.Create(ctx, &other, 0)
		wantStatus(t, err, http.StatusBadRequest, "one_call")
	})
}
