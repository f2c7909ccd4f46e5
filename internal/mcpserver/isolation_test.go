package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// Two agent tokens in sessions of the same name, through real MCP clients:
// B can neither read, list, withdraw nor replace A's asks, nor take the
// answer meant for A; the store reads back as it was (SPEC §1).
func TestIsolationOverMCP(t *testing.T) {
	srv := start(t, app.Config{})
	bToken := srv.Token(t, "agent-b", askd.RoleAgent)
	forEach(t, func(t *testing.T, tr transport) {
		session := "shared-" + tr.name
		a := connect(t, srv, tr, session, nil)
		b := connectAs(t, srv, tr, bToken, session, nil)
		var att, appr struct{ ID int64 }
		structured(t, call(t, a, "ask", map[string]any{"kind": "ready", "title": "A's PR is ready"}), &att)
		structured(t, call(t, a, "request_approval", map[string]any{"title": "A's migration", "grace_seconds": 0}), &appr)
		read := func(id int64) string {
			got, err := srv.App.Get(t.Context(), askd.Caller{Name: "test", Role: askd.RoleHuman}, id)
			if err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(got)
			return string(j)
		}
		before := map[int64]string{att.ID: read(att.ID), appr.ID: read(appr.ID)}

		for _, id := range []int64{att.ID, appr.ID} {
			for _, tool := range []string{"check_ask", "cancel_ask"} {
				res := call(t, b, tool, map[string]any{"id": id})
				if !res.IsError || !strings.Contains(text(t, res), `"unknown"`) {
					t.Errorf("B's %s of A's ask %d: %s (isError %v), want unknown", tool, id, text(t, res), res.IsError)
				}
			}
		}
		var list struct{ Asks []struct{ ID int64 } }
		structured(t, call(t, b, "check_ask", map[string]any{}), &list)
		if len(list.Asks) != 0 {
			t.Errorf("B's check_ask {} lists %d asks, want none of A's", len(list.Asks))
		}
		var mine struct {
			ID       int64
			Revision int
		}
		structured(t, call(t, b, "ask", map[string]any{"kind": "blocked", "title": "B's text"}), &mine)
		if mine.ID == att.ID || mine.Revision != 1 {
			t.Errorf("B's attention ask = id %d rev %d, want a new ask (A's is %d)", mine.ID, mine.Revision, att.ID)
		}
		for id, was := range before {
			if now := read(id); now != was {
				t.Errorf("A's ask %d changed\nbefore %s\nafter  %s", id, was, now)
			}
		}

		// The person answers A; only A hears of it.
		answer(t, srv, att.ID, &askd.Answer{Answer: "merge it"})
		structured(t, call(t, b, "check_ask", map[string]any{}), &list)
		for _, x := range list.Asks {
			if x.ID == att.ID {
				t.Errorf("B's check_ask {} lists A's answered ask")
			}
		}
		if got := call(t, b, "check_ask", map[string]any{"id": att.ID}); !got.IsError {
			t.Errorf("B read A's answered ask: %s", text(t, got))
		}
		if strings.Contains(read(att.ID), `"told_at"`) {
			t.Errorf("A's answer marked told after B's reads")
		}
		res := call(t, a, "check_ask", map[string]any{"id": att.ID})
		if res.IsError || !strings.Contains(text(t, res), "merge it") {
			t.Errorf("A's check_ask: %s", text(t, res))
		}
	})
}
