package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// Sessions belong to the agent token that names them (SPEC §1). Each test
// below is an attack agent B (its own token) makes on agent A's session "s1"
// through the real HTTP server, then reads the store back to see that
// nothing of A's changed.

// twoAgents starts a server with agent A (the test server's agent token) and
// a second agent token B, both asking in session s1.
func twoAgents(t *testing.T) (srv *testserver.Server, a, b *client.Client, bName string) {
	t.Helper()
	srv = testserver.Start(t, testserver.Options{})
	bName = "agent-b"
	b = client.New(srv.URL, srv.Token(t, bName, askd.RoleAgent))
	b.Session = "s1"
	return srv, srv.Agent("s1"), b, bName
}

// stored reads ask id back from the store, as it is.
func stored(t *testing.T, srv *testserver.Server, id int64) *askd.Ask {
	t.Helper()
	a, err := srv.App.Get(t.Context(), askd.Caller{Name: "test", Role: askd.RoleHuman}, id)
	if err != nil {
		t.Fatalf("read ask %d back: %v", id, err)
	}
	return a
}

// unchanged fails unless ask before is stored exactly as it was.
func unchanged(t *testing.T, srv *testserver.Server, before *askd.Ask) {
	t.Helper()
	after := stored(t, srv, before.ID)
	x, _ := json.Marshal(before)
	y, _ := json.Marshal(after)
	if string(x) != string(y) {
		t.Errorf("ask %d changed\nbefore %s\nafter  %s", before.ID, x, y)
	}
}

func wantStatus(t *testing.T, err error, status int, says string) {
	t.Helper()
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != status || !strings.Contains(ae.Message, says) {
		t.Fatalf("err = %v, want %d saying %q", err, status, says)
	}
}

func TestIsolationAgentCannotSeeOrTouchAnothersSession(t *testing.T) {
	srv, a, b, bName := twoAgents(t)
	ctx := ctxT(t)
	attention, err := a.Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "A's decision", Options: []askd.Option{{Label: "x"}, {Label: "y"}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	approval, err := a.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "A's migration", ToolUseID: "toolu_A"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	q := question(false, "A's question?")
	quest, err := a.Create(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := map[int64]*askd.Ask{}
	for _, x := range []*askd.Ask{attention, approval, quest} {
		before[x.ID] = stored(t, srv, x.ID)
	}

	t.Run("list", func(t *testing.T) {
		got, err := b.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("B's GET /api/asks with Askd-Session s1 = %d asks, want none of A's", len(got))
		}
	})
	for _, x := range []*askd.Ask{attention, approval, quest} {
		t.Run("read by id "+string(x.Kind), func(t *testing.T) {
			_, err := b.Check(ctx, x.ID, 0)
			wantStatus(t, err, http.StatusNotFound, "not found")
			unchanged(t, srv, before[x.ID])
		})
		t.Run("withdraw "+string(x.Kind), func(t *testing.T) {
			_, err := b.Withdraw(ctx, x.ID)
			wantStatus(t, err, http.StatusNotFound, "not found")
			unchanged(t, srv, before[x.ID])
		})
	}
	t.Run("replace the attention ask", func(t *testing.T) {
		got, err := b.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "B's text"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID == attention.ID || got.Revision != 1 || got.Agent != bName {
			t.Errorf("B's attention ask = id %d rev %d agent %s, want a new ask of B's (A's is %d)", got.ID, got.Revision, got.Agent, attention.ID)
		}
		unchanged(t, srv, before[attention.ID])
	})
	t.Run("re-attach by question text", func(t *testing.T) {
		got, err := b.Create(ctx, q, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID == quest.ID || got.Agent != bName {
			t.Errorf("B asking A's question got ask %d of %s, want a new ask of B's (A's is %d)", got.ID, got.Agent, quest.ID)
		}
		unchanged(t, srv, before[quest.ID])
	})
	t.Run("re-attach by tool_use_id", func(t *testing.T) {
		for _, title := range []string{"A's migration", "B's other content"} {
			got, err := b.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: title, ToolUseID: "toolu_A"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID == approval.ID || got.Agent != bName {
				t.Errorf("B's approval with A's tool_use_id = ask %d of %s, want a new ask of B's (A's is %d)", got.ID, got.Agent, approval.ID)
			}
			unchanged(t, srv, before[approval.ID])
		}
	})
	t.Run("set the channel", func(t *testing.T) {
		if _, err := b.SetChannel(ctx, "s1", askd.Channel{Type: askd.ChannelWebhook, URL: "https://b.example/steal", Secret: "k"}); err != nil {
			t.Fatal(err)
		}
		got, err := srv.App.SessionChannel(ctx, srv.AgentName, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != askd.ChannelHook {
			t.Errorf("A's s1 channel after B set its own s1 = %+v, want the default hook channel", got)
		}
		mine, err := srv.App.SessionChannel(ctx, bName, "s1")
		if err != nil || mine.URL != "https://b.example/steal" {
			t.Errorf("B's own s1 channel = %+v, %v; want its webhook", mine, err)
		}
	})
	t.Run("the inbox shows both", func(t *testing.T) {
		ss, err := srv.Human().Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range ss {
			got = append(got, s.Agent+"/"+s.Name)
		}
		if want := []string{srv.AgentName + "/s1", bName + "/s1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("GET /api/sessions = %v, want %v", got, want)
		}
		mine, err := srv.Human().List(ctx, client.ListOptions{Agent: srv.AgentName, Session: "s1", Status: askd.StatusPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(mine) != 3 {
			t.Errorf("GET /api/asks?agent=A&session=s1 = %d pending, want A's 3", len(mine))
		}
		for _, x := range mine {
			if x.Agent != srv.AgentName {
				t.Errorf("A's scope lists ask %d of %s", x.ID, x.Agent)
			}
		}
	})
}

// An answer meant for A is not told to B, by any path: reading the settled
// ask, the Stop hook (body session_id or header), or asking the same again.
func TestIsolationAnswerNotStolen(t *testing.T) {
	srv, a, b, _ := twoAgents(t)
	ctx := ctxT(t)
	att, err := a.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Deploy is ready"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	q := question(false, "Which check first?")
	qa, err := a.Create(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	human := srv.Human()
	if _, err := human.Answer(ctx, att.ID, &askd.Answer{Answer: "ship it"}); err != nil {
		t.Fatal(err)
	}
	if _, err := human.Answer(ctx, qa.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which check first?": {Values: []string{"tests"}}}}); err != nil {
		t.Fatal(err)
	}
	settledAtt, settledQ := stored(t, srv, att.ID), stored(t, srv, qa.ID)

	// B's token, A's session name in the hook's body and in the header.
	bToken := b.Token
	for _, h := range []map[string]string{nil, {"Askd-Session": "s1"}} {
		got := postHook(ctx, t, srv, bToken, "", `{"hook_event_name":"Stop","session_id":"s1"}`, h)
		wantReply(t, got, http.StatusOK, "{}\n")
	}
	if _, err := b.Check(ctx, att.ID, 0); err == nil {
		t.Error("B read A's settled ask")
	}
	again, err := b.Create(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID == qa.ID || again.Answer != nil {
		t.Errorf("B asking A's answered question got ask %d with answer %v, want a new pending ask", again.ID, again.Answer)
	}
	unchanged(t, srv, settledAtt)
	unchanged(t, srv, settledQ)

	// A's own Stop hook still gets the answer, once.
	got := postHook(ctx, t, srv, srv.AgentToken, "", `{"hook_event_name":"Stop","session_id":"s1"}`, nil)
	if got.status != http.StatusOK || !strings.Contains(got.body, "ship it") {
		t.Fatalf("A's Stop hook = %d %s, want the person's answer", got.status, got.body)
	}
	if a := stored(t, srv, att.ID); a.ToldAt == nil {
		t.Error("A's ask not marked told after A's Stop hook")
	}
}

// A retried approval with the same tool_use_id and new content cancels the
// old one as replaced (README), rather than leaving two pending.
func TestApprovalRetryWithNewContentReplacesTheOld(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx := ctxT(t)
	agent := srv.Agent("s1")
	old, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "rm -rf build", ToolUseID: "toolu_9"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	same, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "rm -rf build", ToolUseID: "toolu_9"}, 0)
	if err != nil || same.ID != old.ID {
		t.Fatalf("same retry = %v, %v; want ask %d again", same, err, old.ID)
	}
	renewed, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindApproval, Title: "rm -rf build/cache", ToolUseID: "toolu_9"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if renewed.ID == old.ID {
		t.Fatalf("retry with new content returned the old ask %d", old.ID)
	}
	got := stored(t, srv, old.ID)
	if got.Status != askd.StatusCancelled || got.CancelReason != askd.ReasonReplaced {
		t.Errorf("old ask = %s/%s, want cancelled/replaced", got.Status, got.CancelReason)
	}
	open, err := agent.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].ID != renewed.ID {
		t.Errorf("open asks = %d, want only the new one %d", len(open), renewed.ID)
	}
}

// One token cannot bury the inbox by naming new sessions: its pending asks
// across sessions and its new sessions per minute are capped, refused with
// 429 naming the rule, and nothing is stored for a refused ask.
func TestPerTokenCaps(t *testing.T) {
	tests := []struct {
		name   string
		cfg    app.Config
		says   string
		nAsked int // asks that go through before the refusal
	}{
		{"pending across sessions", app.Config{MaxPendingPerToken: 5, MaxNewSessions: 100}, "--max-pending-per-token", 5},
		{"new sessions per minute", app.Config{MaxPendingPerToken: 100, MaxNewSessions: 3}, "--max-new-sessions", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testserver.Start(t, testserver.Options{Config: tt.cfg})
			ctx := ctxT(t)
			for i := range tt.nAsked {
				agent := srv.Agent("flood-" + string(rune('a'+i)))
				if _, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "x"}, 0); err != nil {
					t.Fatalf("ask %d: %v", i, err)
				}
			}
			_, err := srv.Agent("flood-z").Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "one too many"}, 0)
			wantStatus(t, err, http.StatusTooManyRequests, tt.says)
			// A channel for a new session is refused by the same cap.
			if tt.cfg.MaxNewSessions < 100 {
				_, err := srv.Agent("x").SetChannel(ctx, "flood-y", askd.Channel{Type: askd.ChannelHook})
				wantStatus(t, err, http.StatusTooManyRequests, tt.says)
			}
			all, err := srv.Human().List(ctx, client.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != tt.nAsked {
				t.Errorf("stored %d asks, want the %d before the refusal", len(all), tt.nAsked)
			}
			ss, err := srv.Human().Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != tt.nAsked {
				t.Errorf("%d sessions, want %d", len(ss), tt.nAsked)
			}
			// Another token is not held back by this one's caps, and an
			// existing session goes on.
			other := client.New(srv.URL, srv.Token(t, "agent-other", askd.RoleAgent))
			if _, err := other.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "mine"}, 0); err != nil {
				t.Errorf("another token's ask: %v", err)
			}
			if tt.cfg.MaxNewSessions < 100 {
				if _, err := srv.Agent("flood-a").Create(ctx, question(false, "still here?"), 0); err != nil {
					t.Errorf("an existing session's new ask at the new-session cap: %v", err)
				}
			}
		})
	}
}
